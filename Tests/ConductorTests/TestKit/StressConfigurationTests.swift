import Testing

/// The seed scheme of every seeded test. Regression: a base seed used to replace the whole
/// list, so `scripts/stress` (which sets a fresh base every pass) ran one case per test.
@Suite struct StressConfigurationTests {
    @Test func aBaseSeedExpandsToTheStressCount() {
        let seeds = StressConfiguration.seeds(
            default: 40, base: 0xA, environment: ["CONDUCTOR_SEED": "5", "CONDUCTOR_STRESS": "2000"])
        #expect(seeds.count == 2000)
        #expect(Set(seeds).count == 2000)
        let otherBase = StressConfiguration.seeds(
            default: 40, base: 0xA, environment: ["CONDUCTOR_SEED": "6", "CONDUCTOR_STRESS": "2000"])
        #expect(Set(seeds).isDisjoint(with: otherBase))
    }

    @Test func withoutEnvironmentEveryRunExploresTheSameCases() {
        let first = StressConfiguration.seeds(default: 40, base: 0xA, environment: [:])
        #expect(first.count == 40)
        #expect(first == StressConfiguration.seeds(default: 40, base: 0xA, environment: [:]))
        #expect(first != StressConfiguration.seeds(default: 40, base: 0xB, environment: [:]))
    }

    @Test func replayRunsExactlyThePrintedSeed() {
        let seeds = StressConfiguration.seeds(
            default: 40, base: 0xA,
            environment: ["CONDUCTOR_REPLAY": "12345", "CONDUCTOR_SEED": "5", "CONDUCTOR_STRESS": "2000"])
        #expect(seeds == [12345])
    }

    @Test func aBadStressCountFallsBackToTheDefault() {
        #expect(StressConfiguration.iterations(default: 7, environment: ["CONDUCTOR_STRESS": "-3"]) == 7)
        #expect(StressConfiguration.iterations(default: 7, environment: ["CONDUCTOR_STRESS": "x"]) == 7)
        #expect(StressConfiguration.iterations(default: 7, environment: ["CONDUCTOR_STRESS": "9"]) == 9)
    }
}

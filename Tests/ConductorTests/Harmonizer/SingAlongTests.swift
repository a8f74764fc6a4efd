import Conductor
import ConductorTestKit
import Logging
import Testing

/// The seed's example: entering the sing-along page downloads the child's last recording
/// (absent the first time), the original song and the lead song, and plays a 3-second
/// prompt ("put on your headphones"); only when all four are done does the curtain rise.
/// A child will not wait more than 2 seconds. Time runs on a `ManualClock`.
@Suite struct SingAlongTests {
    private static let page = "sing-along"

    private struct Scene {
        let clock = ManualClock()
        let registry: HarmonizerRegistry
        let curtain = OutcomeRecorder()
        /// The registry's misuse warnings: a download or a prompt that ends after the page has
        /// gone is logged, and each test says which it expects.
        let log: CapturingLogHandler
        /// The prompt's count-down, which returns whether it still counted.
        let prompt: Task<Bool, Never>

        init(timeout: Duration) throws {
            let log = CapturingLogHandler()
            self.log = log
            registry = HarmonizerRegistry(clock: clock, logger: Logger(label: "test") { _ in log })
            try registry.create(
                page,
                participants: ["last-recording", "original-song", "lead-song", "prompt"],
                timeout: timeout,
                on: .mainActor,
                completion: curtain.record
            )
            prompt = Task { [clock, registry] in
                try? await clock.sleep(for: .seconds(3))
                return registry.leave(page, participant: "prompt")
            }
        }

        /// The messages the registry logged, in order.
        var warnings: [String] { log.lines.all.map(\.message) }

        /// A download finishing, from whichever module performs it.
        func download(_ participant: String, file: String?) {
            if let file { registry.stash(file, as: participant, in: page) }
            registry.leave(page, participant: participant)
        }
    }

    @Test func theTwoSecondTimeoutBeatsTheThreeSecondPrompt() async throws {
        let scene = try Scene(timeout: .seconds(2))
        scene.download("last-recording", file: nil)  // first sing-along: nothing recorded yet
        scene.download("original-song", file: "/tmp/original.mp3")
        scene.download("lead-song", file: "/tmp/lead.mp3")
        await scene.clock.sleepers(atLeast: 2)  // the timeout and the prompt
        scene.clock.advance(by: .seconds(2))

        let outcome = try #require(await scene.curtain.next())
        #expect(outcome.missing == ["prompt"])
        #expect(outcome.stash?["original-song"] as? String == "/tmp/original.mp3")
        #expect(outcome.stash?["lead-song"] as? String == "/tmp/lead.mp3")
        #expect(outcome.stash?["last-recording"] == nil)

        scene.clock.advance(by: .seconds(1))
        #expect(await scene.prompt.value == false, "the prompt finishing late is harmless")
        #expect(scene.curtain.received.count == 1)
        #expect(scene.warnings == ["leave('sing-along') ignored: no harmonizer named 'sing-along' is waiting"])
    }

    @Test func onAWeakNetworkTheTimeoutNamesTheDownloadStillMissing() async throws {
        let scene = try Scene(timeout: .seconds(2))
        scene.download("last-recording", file: "/tmp/last.mp3")
        scene.download("original-song", file: "/tmp/original.mp3")
        await scene.clock.sleepers(atLeast: 2)
        scene.clock.advance(by: .seconds(2))
        #expect(await scene.curtain.next()?.missing == ["lead-song", "prompt"])
        scene.clock.advance(by: .seconds(1))
        #expect(await scene.prompt.value == false)
        #expect(scene.warnings == ["leave('sing-along') ignored: no harmonizer named 'sing-along' is waiting"])
    }

    @Test func aPatientPageRaisesTheCurtainWhenThePromptEnds() async throws {
        let scene = try Scene(timeout: .seconds(5))
        scene.download("last-recording", file: "/tmp/last.mp3")
        scene.download("original-song", file: "/tmp/original.mp3")
        scene.download("lead-song", file: "/tmp/lead.mp3")
        await scene.clock.sleepers(atLeast: 2)
        scene.clock.advance(by: .seconds(3))

        #expect(await scene.prompt.value)
        let outcome = try #require(await scene.curtain.next())
        #expect(outcome.isCompleted)
        #expect(outcome.stash?.count == 3)
        #expect(scene.clock.sleeperCount == 0, "the 5-second timeout was disarmed")
        #expect(scene.warnings.isEmpty)
    }

    @Test func leavingThePageCancelsWithoutRaisingTheCurtain() async throws {
        let scene = try Scene(timeout: .seconds(2))
        let harmonizer = try #require(scene.registry.harmonizer(named: Self.page))
        scene.download("original-song", file: "/tmp/original.mp3")
        #expect(scene.registry.cancel(Self.page))
        scene.download("lead-song", file: "/tmp/lead.mp3")  // arrives after the child left

        #expect(await harmonizer.outcome.isCancelled)
        await scene.clock.sleepers(atLeast: 1)  // only the prompt: the timeout was disarmed
        scene.clock.advance(by: .seconds(3))
        #expect(await scene.prompt.value == false)
        #expect(scene.curtain.received.isEmpty)
        // The late download's stash and count-down, and the prompt's: the name is logged once.
        #expect(scene.warnings == ["stash('sing-along') ignored: no harmonizer named 'sing-along' is waiting"])
    }
}

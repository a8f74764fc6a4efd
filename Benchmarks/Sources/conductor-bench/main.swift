import Foundation

/// conductor-bench: Conductor against what Swift developers use today, interleaved in one
/// process, reported as ratios (Conductor ÷ baseline; lower is better).
///
///     swift run -c release --package-path Benchmarks conductor-bench [--quick] [--filter NAME]
///         [--rounds N] [--json PATH]
///     conductor-bench instructions --list | NAME N    (one contender once, for callgrind)

struct Options {
    var quick = false
    var filter: String?
    var jsonPath: String?
    var rounds = 5
    var subjectOnly = false

    static let usage = """
        usage: conductor-bench [--quick] [--filter NAME] [--rounds N] [--json PATH] [--subject-only]
               conductor-bench instructions --list | NAME N
          --quick        reduced sizes (the whole run in under a minute)
          --filter NAME  only the scenarios whose name contains NAME (e.g. graph.dag)
          --rounds N     measured rounds per contender after the warm-up (at least 5; default 5)
          --json PATH    also write the results as JSON
          --subject-only run only Conductor's side (for a profiler); prints no table
          instructions   run contender NAME once at size N, untimed, for callgrind (scripts/instructions)
        """

    init(_ arguments: [String]) {
        var remaining = arguments[...]
        func value(for flag: String) -> String {
            guard let value = remaining.popFirst() else { Self.fail("\(flag) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick": quick = true
            case "--subject-only": subjectOnly = true
            case "--filter": filter = value(for: argument)
            case "--json": jsonPath = value(for: argument)
            case "--rounds":
                guard let rounds = Int(value(for: argument)), rounds >= 5 else { Self.fail("--rounds must be ≥ 5") }
                self.rounds = rounds
            case "-h", "--help":
                print(Self.usage)
                exit(0)
            default: Self.fail("unknown argument \(argument)")
            }
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("conductor-bench: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}

/// Every scenario at its full and quick size; built only when it runs.
func allScenarios(quick: Bool) -> [(name: String, make: () -> Scenario)] {
    func size(_ full: Int, _ reduced: Int) -> Int { quick ? reduced : full }
    var list: [(String, () -> Scenario)] = []
    for n in quick ? [10_000] : [10_000, 100_000] {
        list.append(("graph.independent", { independentScenario(n) }))
    }
    for n in quick ? [10_000] : [10_000, 100_000] {
        list.append(("graph.dag", { dagScenario(n) }))
    }
    list.append(("graph.dag", { dagScenario(1_000, operationQueueOnly: true) }))
    // Kept for one release (issue 20), so that the change of body shape shows in the table.
    for n in quick ? [10_000] : [10_000, 100_000] {
        list.append(("graph.dag (old body)", { dagScenario(n, oldBody: true) }))
    }
    list.append(("graph.dag (old body)", { dagScenario(1_000, oldBody: true, operationQueueOnly: true) }))
    list.append(("graph.stages 100×10", { stagesScenario(stages: 100, width: 10) }))
    list.append(("graph.stages 10×1000", { stagesScenario(stages: 10, width: 1_000) }))
    list.append(("graph.parallel", { parallelScenario(layers: 20, width: 100) }))
    list.append(("harmonizer.countdown", { harmonizerCountdownScenario(size(1_000_000, 100_000)) }))
    list.append(("harmonizer.registry", { harmonizerRegistryScenario(size(1_000_000, 100_000)) }))
    list.append(("harmonizer.registry create→10→done", { harmonizerLifecycleScenario(size(100_000, 10_000)) }))
    list.append(("gate.schedule", { gateScheduleScenario(size(100_000, 20_000)) }))
    list.append(("gate.refresh-storm", { gateRefreshStormScenario(size(10_000, 2_000)) }))
    // Kept for one release (issue 20): the burst from one task group, whose child list the runtime walks.
    list.append(
        ("gate.refresh-storm (old harness)", { gateRefreshStormScenario(size(10_000, 2_000), oldHarness: true) }))
    list.append(("assembly.resolve", { assemblyScenario(size(1_000_000, 100_000)) }))
    list.append(("memory.pending", { memoryScenario(size(100_000, 10_000)) }))
    return list
}

/// The timed benchmark: every selected scenario, its table and notes, and the JSON file.
@MainActor
func runBenchmarks(_ options: Options) async {
    let selected = allScenarios(quick: options.quick).filter { entry in
        options.filter.map { entry.name.contains($0) } ?? true
    }
    if selected.isEmpty { Options.fail("no scenario matches \(options.filter ?? "")") }

    let started = nanoseconds()
    var rows: [Row] = []
    var notes: [String] = []
    for entry in selected {
        let scenario = entry.make()
        FileHandle.standardError.write(Data("running \(scenario.name) n=\(scenario.n)…\n".utf8))
        if options.subjectOnly {
            for _ in 0...options.rounds { _ = await scenario.subject.measure() }
            continue
        }
        rows += await run(scenario, rounds: options.rounds)
        if let note = scenario.note { notes.append("\(scenario.name): \(note)") }
    }
    if options.subjectOnly { return }
    print(table(rows))
    print()
    for note in notes { print("- \(note)") }
    print(
        "- \(options.rounds) interleaved rounds after a warm-up; ratio = Conductor ÷ baseline (medians), lower is better;"
            + " total \(formatted(Double(nanoseconds() - started) / 1e9, decimals: 1)) s"
    )
    if let path = options.jsonPath {
        do {
            try json(rows).write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Options.fail("cannot write \(path): \(error)")
        }
    }
}

// `main` itself never awaits, so that the instructions mode can run under valgrind (see
// Instructions.swift). The timed benchmark runs as top-level `await` code would: in a task on
// the main actor, with `dispatchMain()` serving the main queue.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "instructions" { countInstructions(Array(arguments.dropFirst())) }
let options = Options(arguments)
Task { @MainActor in
    await runBenchmarks(options)
    exit(0)
}
dispatchMain()

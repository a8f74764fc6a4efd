import ConductorJobs
import Foundation

/// conductor-bench: Conductor against what Swift developers use today, interleaved in one
/// process, reported as ratios (Conductor ÷ baseline; lower is better).
///
///     swift run -c release --package-path Benchmarks conductor-bench [--quick] [--filter NAME]
///         [--rounds N] [--json PATH] [--two-cores-only]    (each scenario on two cores, then pinned)
///     conductor-bench instructions --list | NAME N    (one contender once, for callgrind)
///     conductor-bench bytes --list | NAME N           (heap bytes per unit, for the budget check)

struct Options {
    var quick = false
    var filter: String?
    var scenario: String?
    var jsonPath: String?
    var rounds = 5
    var subjectOnly = false
    var twoCoresOnly = false
    /// Set in the pinned copy the runner starts (internal): the index of the scenario to run in
    /// the selection, and where to write its summaries.
    var pinnedChild: Int?
    var resultsPath: String?
    var spinRate: Int?
    /// The arguments that select and size the scenarios, for the pinned copy.
    var selectionArguments: [String] = []

    static let usage = """
        usage: conductor-bench [--quick] [--filter NAME | --scenario NAME] [--rounds N] [--json PATH]
                               [--two-cores-only] [--subject-only]
               conductor-bench instructions --list | NAME N
               conductor-bench bytes --list | NAME N
          --quick           reduced sizes (the whole run in under a minute)
          --filter NAME     only the scenarios whose name contains NAME (e.g. graph.dag)
          --scenario NAME   only the scenarios named exactly NAME (e.g. gate.refresh-storm)
          --rounds N        measured rounds per contender after the warm-up (at least 5; default 5)
          --json PATH       also write the results as JSON
          --two-cores-only  skip the pinned copy: time on all cores only (by default each scenario
                            is timed on all cores, then again in a copy of this process pinned to
                            CPU 0 with taskset, Linux only)
          --subject-only    run only Conductor's side, in this process (for a profiler); prints no table
          instructions      run contender NAME once at size N, untimed, for callgrind (scripts/instructions)
          bytes             print the heap bytes per unit of NAME at size N (scripts/instructions --check)
        """

    init(_ arguments: [String]) {
        var remaining = arguments[...]
        func value(for flag: String) -> String {
            guard let value = remaining.popFirst() else { Self.fail("\(flag) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                quick = true
                selectionArguments.append(argument)
            case "--subject-only": subjectOnly = true
            case "--two-cores-only": twoCoresOnly = true
            case "--filter":
                filter = value(for: argument)
                selectionArguments += [argument, filter!]
            case "--scenario":
                scenario = value(for: argument)
                selectionArguments += [argument, scenario!]
            case "--json": jsonPath = value(for: argument)
            case "--rounds":
                guard let rounds = Int(value(for: argument)), rounds >= 5 else { Self.fail("--rounds must be ≥ 5") }
                self.rounds = rounds
                selectionArguments += [argument, String(rounds)]
            case "--pinned-child":
                guard let index = Int(value(for: argument)), index >= 0 else { Self.fail("--pinned-child INDEX") }
                pinnedChild = index
            case "--results": resultsPath = value(for: argument)
            case "--spin-rate":
                guard let rate = Int(value(for: argument)), rate > 0 else { Self.fail("--spin-rate N") }
                spinRate = rate
            case "-h", "--help":
                print(Self.usage)
                exit(0)
            default: Self.fail("unknown argument \(argument)")
            }
        }
        if filter != nil && scenario != nil { Self.fail("--filter and --scenario exclude each other") }
        if pinnedChild != nil && resultsPath == nil { Self.fail("--pinned-child needs --results") }
    }

    func selects(_ name: String) -> Bool {
        if let scenario { return name == scenario }
        if let filter { return name.contains(filter) }
        return true
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
    list.append(("graph.limit", { limitScenario(size(10_000, 2_000), capacity: 4) }))
    list.append(("harmonizer.countdown", { harmonizerCountdownScenario(size(1_000_000, 100_000)) }))
    list.append(("harmonizer.registry", { harmonizerRegistryScenario(size(1_000_000, 100_000)) }))
    list.append(("harmonizer.registry handle", { harmonizerRegistryHandleScenario(size(1_000_000, 100_000)) }))
    list.append(("harmonizer.registry create→10→done", { harmonizerLifecycleScenario(size(100_000, 10_000)) }))
    list.append(("gate.schedule", { gateScheduleScenario(size(100_000, 20_000)) }))
    list.append(("gate.refresh-storm", { gateRefreshStormScenario(size(10_000, 2_000)) }))
    // Kept for one release (issue 20): the burst from one task group, whose child list the runtime walks.
    list.append(
        ("gate.refresh-storm (old harness)", { gateRefreshStormScenario(size(10_000, 2_000), oldHarness: true) }))
    list.append(("assembly.resolve", { assemblyScenario(size(1_000_000, 100_000)) }))
    list.append(("memory.pending", { memoryScenario(size(100_000, 10_000)) }))
    // Issue 37: the job queue's durable enqueue against the same row inserted with GRDB, at the
    // default synchronous FULL (the goal's row) and at NORMAL (what the queue adds, without the disk).
    list.append(("jobs.enqueue", { jobsEnqueueScenario(size(1_000, 200), synchronous: .full) }))
    list.append(("jobs.enqueue (synchronous NORMAL)", { jobsEnqueueScenario(size(2_000, 500), synchronous: .normal) }))
    // Issue 20: how the engine uses the second core, against the same work on two plain threads.
    for microseconds in [0, 1, 10] {
        let name = microseconds == 0 ? "scaling.dag no-op" : "scaling.dag \(microseconds) µs"
        list.append((name, { scalingScenario(10_000, microseconds: microseconds) }))
    }
    list.append(("scaling.ceiling 10 µs", { scalingCeilingScenario(10_000, microseconds: 10) }))
    return list
}

/// The timed benchmark: every selected scenario, timed on all cores here and then pinned to
/// one core in a copy of this process, scenario by scenario; the tables, notes and JSON file.
@MainActor
func runBenchmarks(_ options: Options) async {
    let selected = allScenarios(quick: options.quick).filter { options.selects($0.name) }
    if selected.isEmpty { Options.fail("no scenario matches \(options.scenario ?? options.filter ?? "")") }
    if let rate = options.spinRate { setSpinIterationsPerMicrosecond(rate) }

    if let index = options.pinnedChild, let path = options.resultsPath {
        guard selected.indices.contains(index) else { Options.fail("no scenario \(index) in the selection") }
        let scenario = selected[index].make()
        PinnedRunner.write(await run(scenario, rounds: options.rounds), to: path)
        return
    }

    let started = nanoseconds()
    let loadAtStart = loadAverage()
    if !options.subjectOnly { print("load average at start: \(loadAtStart)") }
    var pinned: PinnedRunner?
    var pinnedNote: String
    let runner =
        options.twoCoresOnly || options.subjectOnly
        ? .failure(PinnedUnavailable(reason: "not asked for (--two-cores-only)"))
        : PinnedRunner.make(arguments: options.selectionArguments)
    switch runner {
    case .success(let runner):
        pinned = runner
        pinnedNote = "pinned: a copy of this process under `taskset -c 0`, started after each scenario's two-core run"
    case .failure(let unavailable):
        pinnedNote = "pinned: unavailable — \(unavailable.reason)"
    }
    var rowsByPlacement: [Placement: [Row]] = [:]
    var scalingRows: [ScalingRow] = []
    var notes: [String] = []
    var pinnedOutput = ""
    for (index, entry) in selected.enumerated() {
        let scenario = entry.make()
        FileHandle.standardError.write(Data("running \(scenario.name) n=\(scenario.n) on two cores…\n".utf8))
        if options.subjectOnly {
            for _ in 0...options.rounds { _ = await scenario.subject.measure() }
            continue
        }
        let twoCores = await run(scenario, rounds: options.rounds)
        var pinnedSummaries: [Summary]?
        if let runner = pinned {
            FileHandle.standardError.write(Data("running \(scenario.name) n=\(scenario.n) pinned to CPU 0…\n".utf8))
            if let result = runner.run(index: index), result.summaries.count == scenario.contenders.count {
                pinnedSummaries = result.summaries
                pinnedNote =
                    "pinned: a copy of this process under `taskset -c 0` (it sees \(result.cpus) CPU(s)), "
                    + "started after each scenario's two-core run"
                for line in result.output.split(separator: "\n") { pinnedOutput += "[pinned] \(line)\n" }
            } else {
                Options.fail("the pinned run of \(scenario.name) failed")
            }
        }
        if scenario.isScaling {
            for (contender, summary) in zip(scenario.contenders, twoCores.indices) {
                scalingRows.append(
                    ScalingRow(
                        scenario: scenario.name, n: scenario.n, unit: scenario.unit, contender: contender.name,
                        twoCores: twoCores[summary], pinned: pinnedSummaries?[summary]))
            }
        } else {
            rowsByPlacement[.twoCores, default: []] += rows(scenario, twoCores, placement: .twoCores)
            if let pinnedSummaries {
                rowsByPlacement[.pinned, default: []] += rows(scenario, pinnedSummaries, placement: .pinned)
            }
            if let note = scenario.note { notes.append("\(scenario.name): \(note)") }
        }
    }
    if options.subjectOnly { return }
    print(pinnedOutput, terminator: "")
    for placement in [Placement.twoCores, .pinned] {
        guard let rows = rowsByPlacement[placement] else { continue }
        print()
        print("### \(placement.rawValue)")
        print()
        print(table(rows))
    }
    if !scalingRows.isEmpty {
        print()
        print("### scaling: two cores against pinned")
        print()
        print(scalingTable(scalingRows))
        print()
        print("- speedup = pinned ÷ two cores (medians): 2× is perfect use of the second core")
        print("- bodies spin \(spinIterationsPerMicrosecond()) xorshift rounds per µs (calibrated, fastest of 7 runs)")
        print("- \(cpuTopologyNote())")
    }
    print()
    for note in notes { print("- \(note)") }
    print("- \(pinnedNote)")
    print(
        "- \(options.rounds) interleaved rounds after a warm-up; ratio = Conductor ÷ baseline (medians), lower is better;"
            + " total \(formatted(Double(nanoseconds() - started) / 1e9, decimals: 1)) s"
    )
    print("- load average (1, 5, 15 min) at start: \(loadAtStart); at end: \(loadAverage())")
    if let path = options.jsonPath {
        do {
            let rows = (rowsByPlacement[.twoCores] ?? []) + (rowsByPlacement[.pinned] ?? [])
            try json(rows, scaling: scalingRows).write(toFile: path, atomically: true, encoding: .utf8)
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
if arguments.first == "bytes" { countBytes(Array(arguments.dropFirst())) }
let options = Options(arguments)
Task { @MainActor in
    await runBenchmarks(options)
    exit(0)
}
dispatchMain()

import MallocStats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One contender of a scenario: the subject (Conductor) or a baseline. `measure` runs the
/// workload once and returns the measured value in the scenario's unit.
struct Contender {
    let name: String
    let measure: @Sendable () async -> Double
}

/// A workload at one size, with Conductor's contender first and the baselines after it.
struct Scenario {
    let name: String
    let n: Int
    let unit: String
    let subject: Contender
    let baselines: [Contender]
    /// Printed under the table (what is timed, what a number means).
    var note: String? = nil
    /// A scaling scenario: its contenders are listed in the scaling table (two cores against
    /// pinned, per contender), not compared with each other in the main one.
    var isScaling = false

    var contenders: [Contender] { [subject] + baselines }
}

/// Median, minimum and maximum of the rounds of one contender.
struct Summary {
    let median: Double
    let min: Double
    let max: Double

    init(median: Double, min: Double, max: Double) {
        self.median = median
        self.min = min
        self.max = max
    }

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first ?? 0
        max = sorted.last ?? 0
    }
}

struct Row {
    let placement: Placement
    let scenario: String
    let n: Int
    let unit: String
    let subject: String
    let baseline: String
    let subjectSummary: Summary
    let baselineSummary: Summary

    var ratio: Double { subjectSummary.median / baselineSummary.median }
}

/// Runs every contender of a scenario interleaved — subject, baseline 1, baseline 2, subject,
/// … — after one warm-up round, so that drift in the machine's load hits them all alike; one
/// summary per contender, the subject's first.
func run(_ scenario: Scenario, rounds: Int) async -> [Summary] {
    let contenders = scenario.contenders
    for contender in contenders { _ = await contender.measure() }
    var samples = Array(repeating: [Double](), count: contenders.count)
    for _ in 0..<rounds {
        for (index, contender) in contenders.enumerated() {
            samples[index].append(await contender.measure())
        }
    }
    return samples.map(Summary.init)
}

/// The main table's rows of one scenario: one per baseline, against the subject.
func rows(_ scenario: Scenario, _ summaries: [Summary], placement: Placement) -> [Row] {
    scenario.baselines.indices.map { index in
        Row(
            placement: placement,
            scenario: scenario.name,
            n: scenario.n,
            unit: scenario.unit,
            subject: scenario.subject.name,
            baseline: scenario.baselines[index].name,
            subjectSummary: summaries[0],
            baselineSummary: summaries[index + 1]
        )
    }
}

/// One contender of a scaling scenario, on two cores and pinned to one.
struct ScalingRow {
    let scenario: String
    let n: Int
    let unit: String
    let contender: String
    let twoCores: Summary
    let pinned: Summary?

    /// Pinned ÷ two cores: 2 would be perfect use of the second core.
    var speedup: Double? { pinned.map { $0.median / twoCores.median } }
}

/// Nanoseconds on the monotonic clock.
@inline(__always)
func nanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Times `body` and returns nanoseconds per operation.
@inline(__always)
func nanosecondsPerOperation(_ operations: Int, _ body: () async -> Void) async -> Double {
    let start = nanoseconds()
    await body()
    return Double(nanoseconds() - start) / Double(operations)
}

/// Bytes currently allocated by malloc, for memory deltas (0 where glibc is not the C library).
func allocatedBytes() -> Int {
    Int(malloc_stats_allocated_bytes())
}

// MARK: - Formatting

func format(_ value: Double, unit: String) -> String {
    switch value {
    case ..<10: return String(formatted(value, decimals: 2))
    case ..<100: return String(formatted(value, decimals: 1))
    default: return String(formatted(value, decimals: 0))
    }
}

func formatted(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0 { return String(Int(rounded)) }
    var text = String(rounded)
    if let dot = text.firstIndex(of: ".") {
        let fraction = text.distance(from: dot, to: text.endIndex) - 1
        if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
    }
    return text
}

func padded(_ text: String, _ width: Int, right: Bool = false) -> String {
    let pad = String(repeating: " ", count: max(0, width - text.count))
    return right ? pad + text : text + pad
}

func summaryText(_ summary: Summary, unit: String) -> String {
    "\(format(summary.median, unit: unit)) (\(format(summary.min, unit: unit))–\(format(summary.max, unit: unit)))"
}

/// The scaling table: per contender, time on two cores and pinned to one, and the speedup.
func scalingTable(_ rows: [ScalingRow]) -> String {
    let header = [
        "scenario", "n", "contender", "unit", "two cores: median (min–max)", "pinned: median (min–max)", "speedup",
    ]
    let cells = rows.map { row in
        [
            row.scenario, String(row.n), row.contender, row.unit, summaryText(row.twoCores, unit: row.unit),
            row.pinned.map { summaryText($0, unit: row.unit) } ?? "–",
            row.speedup.map { formatted($0, decimals: 2) + "×" } ?? "–",
        ]
    }
    return markdownTable(header: header, cells: cells, rightAligned: [1, 6])
}

/// A Markdown table: one row per (scenario, baseline) pair.
func table(_ rows: [Row]) -> String {
    let header = [
        "scenario", "n", "unit", "Conductor: median (min–max)", "baseline", "baseline: median (min–max)", "ratio",
    ]
    let cells = rows.map { row in
        [
            row.scenario, String(row.n), row.unit, summaryText(row.subjectSummary, unit: row.unit), row.baseline,
            summaryText(row.baselineSummary, unit: row.unit), formatted(row.ratio, decimals: 3) + "×",
        ]
    }
    return markdownTable(header: header, cells: cells, rightAligned: [1, 6])
}

func markdownTable(header: [String], cells: [[String]], rightAligned: Set<Int>) -> String {
    var widths = header.map(\.count)
    for line in cells { for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) } }
    func line(_ values: [String]) -> String {
        "| "
            + values.enumerated().map { padded($1, widths[$0], right: rightAligned.contains($0)) }
            .joined(separator: " | ") + " |"
    }
    var lines = [line(header), "|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|"]
    lines += cells.map(line)
    return lines.joined(separator: "\n")
}

func json(_ rows: [Row], scaling: [ScalingRow]) -> String {
    func string(_ text: String) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "\"" + escaped + "\""
    }
    let entries = rows.map { row in
        let fields: [(String, String)] = [
            ("placement", string(row.placement.rawValue)),
            ("name", string(row.scenario)),
            ("n", String(row.n)),
            ("unit", string(row.unit)),
            ("subject", string(row.subject)),
            ("baseline", string(row.baseline)),
            ("baseline_value", String(row.baselineSummary.median)),
            ("subject_value", String(row.subjectSummary.median)),
            ("ratio", String(row.ratio)),
            ("baseline_min", String(row.baselineSummary.min)),
            ("baseline_max", String(row.baselineSummary.max)),
            ("subject_min", String(row.subjectSummary.min)),
            ("subject_max", String(row.subjectSummary.max)),
        ]
        return "    {" + fields.map { "\(string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
    let scalingEntries = scaling.map { row in
        var fields: [(String, String)] = [
            ("name", string(row.scenario)),
            ("n", String(row.n)),
            ("unit", string(row.unit)),
            ("contender", string(row.contender)),
            ("two_cores", String(row.twoCores.median)),
            ("two_cores_min", String(row.twoCores.min)),
            ("two_cores_max", String(row.twoCores.max)),
        ]
        if let pinned = row.pinned, let speedup = row.speedup {
            fields += [
                ("pinned", String(pinned.median)), ("pinned_min", String(pinned.min)),
                ("pinned_max", String(pinned.max)), ("speedup", String(speedup)),
            ]
        }
        return "    {" + fields.map { "\(string($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }
    return "{\"scenarios\": [\n" + entries.joined(separator: ",\n") + "\n],\n\"scaling\": [\n"
        + scalingEntries.joined(separator: ",\n") + "\n]}\n"
}

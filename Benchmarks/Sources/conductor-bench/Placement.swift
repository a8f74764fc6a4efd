import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Every timed figure is taken twice in one invocation: in this process, on all the machine's
// cores, and in a copy of this process pinned to one core. On Linux the runner re-executes
// itself under `taskset -c 0` once per scenario, right after timing it here, so that a drift
// in the machine's load hits both placements alike.

/// Where a figure was measured.
enum Placement: String {
    case twoCores = "two cores"
    case pinned = "pinned (taskset -c 0)"
}

/// The machine's load average as `uptime` prints it (1, 5 and 15 minutes), from /proc/loadavg
/// on Linux.
func loadAverage() -> String {
    #if os(Linux)
        if let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) {
            let fields = text.split(separator: " ")
            if fields.count >= 3 { return fields[0..<3].joined(separator: ", ") }
        }
        return "unavailable (/proc/loadavg unreadable)"
    #else
        var loads = [Double](repeating: 0, count: 3)
        guard getloadavg(&loads, 3) == 3 else { return "unavailable" }
        return loads.map { formatted($0, decimals: 2) }.joined(separator: ", ")
    #endif
}

/// What the scaling table's ceiling can reach: whether CPU 0 shares a physical core with
/// another CPU (hyperthread siblings cannot run two busy loops at twice the speed of one).
func cpuTopologyNote() -> String {
    #if os(Linux)
        let path = "/sys/devices/system/cpu/cpu0/topology/thread_siblings_list"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return "CPU 0's hyperthread siblings: unknown (\(path) unreadable)"
        }
        let siblings = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let shared = siblings.contains(",") || siblings.contains("-")
        return "\(ProcessInfo.processInfo.activeProcessorCount) CPUs; CPU 0's thread siblings: \(siblings) — "
            + (shared
                ? "it shares its core with another CPU (hyperthreads), so the ceiling is below 2×"
                : "no hyperthread sibling, so two busy threads can reach 2×")
    #else
        return "\(ProcessInfo.processInfo.activeProcessorCount) CPUs; hyperthread siblings not checked on this OS"
    #endif
}

/// Runs one scenario in a copy of this process pinned to CPU 0, and reads back its summaries.
struct PinnedRunner {
    static let taskset = "/usr/bin/taskset"

    /// The arguments this process was started with, repeated for the copy (its selection and
    /// sizes), without the ones that only the parent acts on.
    let arguments: [String]
    let executable: String

    /// A runner, or why the pinned column is unavailable.
    static func make(arguments: [String]) -> Result<PinnedRunner, PinnedUnavailable> {
        #if os(Linux)
            guard access(taskset, X_OK) == 0 else {
                return .failure(PinnedUnavailable(reason: "\(taskset) is missing (util-linux)"))
            }
            guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            else {
                return .failure(PinnedUnavailable(reason: "/proc/self/exe is unreadable"))
            }
            return .success(PinnedRunner(arguments: arguments, executable: executable))
        #else
            return .failure(
                PinnedUnavailable(
                    reason: "pinning a process to one core needs Linux's taskset (sched_setaffinity); "
                        + "this OS has no equivalent the runner uses"))
        #endif
    }

    /// Runs scenario `index` of the selection pinned to CPU 0: the copy writes one line per
    /// contender (`median min max`, subject first) to a results file, and its standard output
    /// (a scenario's printed notes) to another, which is returned for printing.
    func run(index: Int) -> (summaries: [Summary], output: String, cpus: Int)? {
        let directory = FileManager.default.temporaryDirectory.path
        let stem = "\(directory)/conductor-bench-\(getpid())-\(index)"
        let results = stem + ".results"
        let output = stem + ".out"
        defer {
            unlink(results)
            unlink(output)
        }
        let argv =
            [Self.taskset, "-c", "0", executable] + arguments + [
                "--pinned-child", String(index), "--results", results,
                "--spin-rate", String(spinIterationsPerMicrosecond()),
            ]
        guard spawnAndWait(argv, standardOutput: output) else { return nil }
        guard let text = try? String(contentsOfFile: results, encoding: .utf8) else { return nil }
        var cpus = 0
        var summaries: [Summary] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "cpus", fields.count == 2 {
                cpus = Int(fields[1]) ?? 0
            } else if fields.count == 3, let median = Double(fields[0]), let min = Double(fields[1]),
                let max = Double(fields[2])
            {
                summaries.append(Summary(median: median, min: min, max: max))
            }
        }
        return (summaries, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "", cpus)
    }

    /// The copy's side: the summaries of one scenario's contenders, for the parent to read.
    static func write(_ summaries: [Summary], to path: String) {
        var text = "cpus \(ProcessInfo.processInfo.activeProcessorCount)\n"
        for summary in summaries { text += "\(summary.median) \(summary.min) \(summary.max)\n" }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            Options.fail("cannot write \(path): \(error)")
        }
    }
}

struct PinnedUnavailable: Error {
    let reason: String
}

/// Starts `argv` with its standard output in the file `standardOutput` (standard error shared
/// with this process) and waits for it; true when it exits with status 0.
private func spawnAndWait(_ argv: [String], standardOutput: String) -> Bool {
    #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let arguments = argv.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid = pid_t()
        guard posix_spawn(&pid, argv[0], &actions, nil, arguments, environ) == 0 else { return false }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return false }
        }
        // Exited (not signalled) with status 0.
        return status & 0x7f == 0 && (status >> 8) & 0xff == 0
    #else
        return false
    #endif
}

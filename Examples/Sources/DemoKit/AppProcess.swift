import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process the offline-order story can kill: its standard output read a line at a time
/// as it comes, a `SIGKILL` on demand, and a guard that kills it `killAfter` its launch, so a
/// child that hangs cannot hang the demo or a test.
///
/// ```swift
/// let app = try AppProcess.launch(executable, arguments: ["offline-order", …]) { print("app │", $0) }
/// _ = try await app.lines(where: { $0.hasPrefix("committed") }, described: "it committed", within: .seconds(30))
/// app.kill()
/// let ending = try await app.ended(within: .seconds(30))   // .killed(SIGKILL)
/// ```
final class AppProcess: Sendable {
    /// How the process ended.
    enum Ending: Equatable, Sendable, CustomStringConvertible {
        case exited(Int32)
        case killed(signal: Int32)

        var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .killed(let signal) where signal == SIGKILL: "killed by SIGKILL"
            case .killed(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// What the process said and whether it has ended.
    struct Output: Sendable {
        var lines: [String] = []
        /// Its standard output reached its end: every line it wrote is in `lines`.
        var closed = false
        var ending: Ending?
        var isOver: Bool { closed && ending != nil }
    }

    let pid: Int32
    private let process: Process
    private let output: Watched<Output>

    private init(process: Process, output: Watched<Output>) {
        self.process = process
        self.pid = process.processIdentifier
        self.output = output
    }

    /// This program's own executable, to run again as a child: on Linux `/proc/self/exe`
    /// resolved (the path holds while the file does), elsewhere what the bundle or `argv[0]` says.
    static var currentExecutable: URL {
        #if os(Linux)
            if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
                return URL(fileURLWithPath: path)
            }
        #endif
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }

    /// Starts `executable` with `arguments`; `onLine` hears each line of its standard output
    /// before ``lines(_:where:described:within:clock:)`` can see it, so what is printed stays in order.
    /// Its standard error is this process's.
    static func launch(
        _ executable: URL, arguments: [String], killAfter limit: Duration = .seconds(60),
        clock: some Clock<Duration> = ContinuousClock(), onLine: @escaping @Sendable (String) -> Void
    ) throws -> AppProcess {
        let output = Watched(Output())
        let pipe = Pipe()
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        process.terminationHandler = { process in
            let status = process.terminationStatus
            output.update { output in
                output.ending = process.terminationReason == .uncaughtSignal ? .killed(signal: status) : .exited(status)
            }
        }
        try process.run()
        let app = AppProcess(process: process, output: output)
        // Blocking reads on a thread of their own: neither the cooperative pool nor a dispatch
        // queue is held, and no dispatch source watches a descriptor that could close under it.
        let reader = pipe.fileHandleForReading
        Thread {
            var partial = Data()
            while true {
                let data = Self.readSome(reader.fileDescriptor)
                let lines = Self.completeLines(appending: data, to: &partial)
                for line in lines { onLine(line) }
                output.update { output in
                    output.lines += lines
                    if data.isEmpty { output.closed = true }
                }
                if data.isEmpty { break }
            }
            try? reader.close()
        }.start()
        Task {
            // Ends as soon as the process does; only a child still running at the limit is killed.
            let ended = try? await output.first(
                where: { $0.ending != nil }, within: limit, clock: clock, waitingFor: "the app to end")
            if ended == nil { app.kill() }
        }
        return app
    }

    /// What `read(2)` returns from `descriptor` as soon as there is something: empty at the
    /// end of the output, or on an error. (`FileHandle.read(upToCount:)` waits to fill its count.)
    static func readSome(_ descriptor: Int32) -> Data {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Data(buffer.prefix(count)) }
            if errno != EINTR { return Data() }
        }
    }

    /// The lines `data` completes, with what follows the last newline kept in `partial`; at the
    /// end of the output (`data` empty), the unfinished last line too.
    static func completeLines(appending data: Data, to partial: inout Data) -> [String] {
        partial.append(data)
        var pieces = partial.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        partial = data.isEmpty ? Data() : Data(pieces.removeLast())
        return pieces.map { String(decoding: $0, as: UTF8.self) }.filter { !$0.isEmpty }
    }

    /// Sends `SIGKILL`: the process ends at once, with no chance to clean up.
    func kill() {
        // The ending is set only after Foundation has reaped the process, so a pid not yet
        // marked ended is still this process's (or, in the moment between the two, no one's).
        guard output.value.ending == nil else { return }
        #if canImport(Glibc)
            _ = Glibc.kill(pid, SIGKILL)
        #else
            _ = Darwin.kill(pid, SIGKILL)
        #endif
    }

    /// The first `count` lines that satisfy `matches`, which `what` describes; throws a
    /// ``DemoFailure`` if the process ends first or `limit` passes.
    func lines(
        _ count: Int = 1, where matches: @escaping @Sendable (String) -> Bool, described what: String,
        within limit: Duration, clock: some Clock<Duration> = ContinuousClock()
    ) async throws -> [String] {
        let output = try await output.first(
            where: { output in output.isOver || output.lines.count(where: matches) >= count },
            within: limit, clock: clock, waitingFor: "the app to say \(what)")
        let found = output.lines.filter(matches)
        guard found.count >= count else {
            throw DemoFailure("the app \(output.ending.map(\.description) ?? "ended") before it said \(what)")
        }
        return Array(found.prefix(count))
    }

    /// How the process ended, once it has and its every line has been read.
    func ended(within limit: Duration, clock: some Clock<Duration> = ContinuousClock()) async throws -> Ending {
        let output = try await output.first(
            where: { $0.isOver }, within: limit, clock: clock, waitingFor: "the app (pid \(pid)) to end")
        return output.ending ?? .exited(-1)
    }
}

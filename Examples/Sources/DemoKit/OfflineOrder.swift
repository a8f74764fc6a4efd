public import ConductorJobs
public import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How to run the offline-order story.
public struct OfflineOrderOptions: Sendable {
    /// The app's executable: `conductor-demo`, which becomes the app when given
    /// ``appCommand`` and the app's hidden options.
    public var executable: URL
    /// What makes the executable the app, before the app's own options.
    public var appCommand = ["offline-order"]
    /// The order the app places.
    public var order = "A-1042"
    /// How many failed attempts the app reports before the story kills it.
    public var failuresBeforeKill = 2
    /// The longest the story waits for anything it waits on; past it, it fails and says what
    /// it was waiting for.
    public var limit = Duration.seconds(30)

    public init(executable: URL = OfflineOrderOptions.thisExecutable) {
        self.executable = executable
    }

    /// The running program's executable (on Linux, what `/proc/self/exe` points at).
    public static var thisExecutable: URL { AppProcess.currentExecutable }
}

/// What the offline-order story ended with.
public struct OfflineOrderReport: Sendable {
    /// What the mirrors saw of `POST /orders`.
    public let orders: OrderCounts
    /// The order's job as the app's file records it at the end.
    public let job: JobRecord?
    /// Whether the story went as it should: the first app killed, the second done, one order
    /// placed under the job's key, the job succeeded in a later delivery.
    public let passed: Bool
    /// The story in one line, worded from the counts.
    public let verdict: String
    /// How the first app ended (killed by the story) and the second one.
    let firstRun: AppProcess.Ending
    let secondRun: AppProcess.Ending

    init(orders: OrderCounts, job: JobRecord?, firstRun: AppProcess.Ending, secondRun: AppProcess.Ending) {
        self.orders = orders
        self.job = job
        self.firstRun = firstRun
        self.secondRun = secondRun
        let keys = orders.keys.count == 1 ? "all with one key" : "with \(orders.keys.count) keys"
        var verdict =
            "offline-order: \(orders.placed) order\(orders.placed == 1 ? "" : "s") placed from \(orders.requests) "
            + "requests, \(keys) (\(orders.refused) refused while the mirrors were down, \(orders.accepted) accepted); "
            + "the first app was \(firstRun)"
        if let job {
            verdict += "; after the restart the job \(job.state) at attempt \(job.attempts), delivery \(job.deliveries)"
        } else {
            verdict += "; the app's file has no order"
        }
        self.verdict = verdict
        // Every request, refused or not, carried the job's one key.
        let oneKey = job.map { orders.keys == [$0.idempotencyKey] } ?? false
        passed =
            firstRun == .killed(signal: SIGKILL) && secondRun == .exited(0) && orders.placed == 1
            && job?.state == .succeeded && (job?.deliveries ?? 0) >= 2 && oneKey
    }
}

/// The offline-order story: the shop app places an order with both mirrors down, is killed
/// with `SIGKILL`, and started again once the mirrors are back; the order is placed once.
/// The app is a child process (``OfflineOrderOptions/executable``); `say` hears the story
/// and the app's lines. Every wait is on something observed — the app's lines, the server's
/// counts, the app's end — and bounded by ``OfflineOrderOptions/limit`` on `clock`.
///
/// ```swift
/// let report = try await runOfflineOrder(OfflineOrderOptions()) { print($0) }
/// print(report.verdict)   // "offline-order: 1 order placed from 6 requests, all with one key …"
/// ```
public func runOfflineOrder(
    _ options: OfflineOrderOptions, clock: some Clock<Duration> = ContinuousClock(),
    say: @escaping @Sendable (String) -> Void
) async throws -> OfflineOrderReport {
    let server = try await DemoServer.start()
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("conductor-demo-offline-order-\(UUID().uuidString)", isDirectory: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let story = OfflineOrderStory(
            server: server, options: options, database: folder.appendingPathComponent("jobs.sqlite").path,
            clock: clock, say: say)
        let report = try await story.run()
        await server.stop()
        return report
    } catch {
        await server.stop()
        throw error
    }
}

struct OfflineOrderStory<StoryClock: Clock<Duration>> {
    let server: DemoServer
    let options: OfflineOrderOptions
    let database: String
    let clock: StoryClock
    let say: @Sendable (String) -> Void
    private let launched = Guarded<[AppProcess]>([])

    init(
        server: DemoServer, options: OfflineOrderOptions, database: String, clock: StoryClock,
        say: @escaping @Sendable (String) -> Void
    ) {
        self.server = server
        self.options = options
        self.database = database
        self.clock = clock
        self.say = say
    }

    func run() async throws -> OfflineOrderReport {
        do {
            return try await tell()
        } catch {
            // A story that failed half-way leaves no app running behind it.
            killApps()
            throw error
        }
    }

    private func tell() async throws -> OfflineOrderReport {
        server.setMirrorsDown(true)
        say("── both mirrors down: they answer every request 503")
        let first = try launchApp(placing: options.order)
        _ = try await first.lines(
            where: { $0.hasPrefix(OrderApp.committedLine) }, described: "it committed the order",
            within: options.limit, clock: clock)
        let failures = options.failuresBeforeKill
        _ = try await first.lines(
            failures, where: { $0.hasSuffix(OrderApp.retryLine) }, described: "\(failures) attempts failed",
            within: options.limit, clock: clock)
        say(
            "── \(failures) attempts failed (\(server.orders.refused) requests refused at the mirrors); "
                + "killing the app (pid \(first.pid)) with SIGKILL")
        first.kill()
        let firstRun = try await first.ended(within: options.limit, clock: clock)
        say("── the app was \(firstRun); the order is in its file, not at the shop")

        server.setMirrorsDown(false)
        say("── both mirrors back up; the app starts again, with nothing new to order")
        let second = try launchApp(placing: nil)
        let secondRun = try await second.ended(within: options.limit, clock: clock)
        say("── the app \(secondRun)")

        let job = try JobQueue(path: database).jobs(tag: "orders").first
        return OfflineOrderReport(orders: server.orders, job: job, firstRun: firstRun, secondRun: secondRun)
    }

    /// Starts the app on the story's file and the server's mirrors; its lines go to `say`.
    func launchApp(placing order: String?) throws -> AppProcess {
        var arguments = options.appCommand + ["--app-database", database]
        for (_, authority) in server.authorities { arguments += ["--app-mirror", "http://\(authority)"] }
        if let order { arguments += ["--app-order", order] }
        let say = self.say
        let app = try AppProcess.launch(options.executable, arguments: arguments, clock: clock) {
            say("   app │ \($0)")
        }
        launched.withLock { $0.append(app) }
        return app
    }

    /// Kills every app the story started that still runs.
    private func killApps() {
        for app in launched.withLock({ $0 }) { app.kill() }
    }
}

import ConductorJobs
import Foundation
import Testing

/// The queue across kills: a child process (Tests/ConductorJobsCrashChild) enqueues orders and
/// places them through a request gate with an order server on loopback, and is killed with
/// SIGKILL — at a named crash point, or at points a seeded generator draws — then started again
/// on the same file until every order has ended. Whatever the kills, no order is lost, each
/// carries one idempotency key on every delivery, a chained order's effect follows its
/// predecessor's, and no order is recorded complete whose effect the server did not see. The
/// server performs an order once per key: that de-duplication is the server's half of "exactly
/// once in effect" (the JobQueue article says so). Each test is bounded: a scenario that never
/// ends fails after 300 starts, and the suite at its time limit.
@Suite(.serialized, .timeLimit(.minutes(10))) struct JobCrashTests {
    static let orders = 9

    /// Kills at each crash point, reproducible by its name: the Nth start is killed the Nth
    /// time it reaches the point, so each start gets further, until one ends on its own.
    @Test(arguments: ["afterEnqueue", "insideHandler", "afterHandler", "beforeCommit"])
    func aKillAtANamedPointLosesNothing(point: String) async throws {
        let server = try await OrderServer.start()
        let outcome = try await CrashScenario(server: server, orders: Self.orders)
            .runUntilDone { start in ["--crash", "\(point):\(start)"] }
        await server.stop()
        #expect(outcome.kills >= 1, "the child was killed at \(point)")
        try outcome.check(against: server)
        if point != "afterEnqueue" {
            #expect(outcome.records.contains { $0.deliveries > 1 }, "a job killed mid-delivery ran again")
        }
    }

    /// At least 200 kills at moments a seeded generator draws among every crash point (each
    /// reached point kills with probability 1 in 4), over scenarios of fresh files: the same seeds
    /// draw the same moments (up to how threads interleave). `scripts/stress` runs it with a
    /// fresh base every pass (`CONDUCTOR_SEED`) and as many kills as `CONDUCTOR_STRESS` asks;
    /// a failure names the scenario's seed, and `CONDUCTOR_REPLAY=<seed>` runs that scenario alone.
    @Test func twoHundredKillsAtSeededMomentsLoseNothing() async throws {
        let environment = ProcessInfo.processInfo.environment
        let replay = environment["CONDUCTOR_REPLAY"].flatMap(UInt64.init)
        let runBase = environment["CONDUCTOR_SEED"].flatMap(UInt64.init) ?? 0
        let target = replay == nil ? max(200, environment["CONDUCTOR_STRESS"].flatMap(Int.init) ?? 0) : 1
        var kills = 0
        var scenario: UInt64 = 0
        while kills < target {
            scenario += 1
            // A scenario's seed; its nth start draws from seed + n.
            let seed = replay ?? (runBase &+ scenario) &* 1000
            let server = try await OrderServer.start()
            let outcome = try await CrashScenario(server: server, orders: Self.orders)
                .runUntilDone { start in ["--crash-seed", "\(seed &+ UInt64(start)):25"] }
            await server.stop()
            try outcome.check(against: server, scenario: "CONDUCTOR_REPLAY=\(seed): ")
            kills += outcome.kills
            if replay != nil { break }
        }
        #expect(replay != nil || kills >= target)
    }
}

/// A file, a child process started on it again and again, and what the file holds at the end.
struct CrashScenario {
    let server: OrderServer
    let orders: Int
    let file = TemporaryFile("crash")
    var database: String { file.path }

    init(server: OrderServer, orders: Int) {
        self.server = server
        self.orders = orders
    }

    struct Outcome {
        var kills = 0
        var starts = 0
        var records: [JobRecord] = []
        let orders: Int

        /// Every promise of the queue across the kills, against what the server saw.
        /// `scenario` starts every failure's message (how to replay it).
        func check(against server: OrderServer, scenario: String = "") throws {
            // No job lost, none enqueued twice.
            let names = records.compactMap(\.uniqueName).sorted()
            #expect(names == (0..<orders).map { "order-\($0)" }.sorted(), "\(scenario)every order once in the file")
            for record in records {
                #expect(record.state == .succeeded, "\(scenario)\(record.uniqueName ?? "?") ended \(record.state)")
            }
            let received = server.received
            let effects = server.effects
            for record in records {
                let order = Int(record.uniqueName!.dropFirst("order-".count))!
                // The same key on every delivery, across restarts.
                let keys = Set(received.filter { $0.order == order }.map(\.key))
                #expect(keys == [record.idempotencyKey], "\(scenario)order \(order) was sent with keys \(keys)")
                // Complete only with its effect seen; exactly once in effect.
                let times = effects[order]?.count ?? 0
                #expect(times == 1, "\(scenario)order \(order) took effect \(times) times")
            }
            // Chains in order: every third order follows the one before it.
            for order in 0..<orders where order % 3 == 2 {
                let before = try #require(effects[order - 1]?.first).sequence
                let after = try #require(effects[order]?.first).sequence
                #expect(before < after, "\(scenario)order \(order) took effect before order \(order - 1)")
            }
        }
    }

    /// Starts the child until it exits 0, each start with the options `options` gives for it.
    func runUntilDone(_ options: (Int) -> [String]) async throws -> Outcome {
        var outcome = Outcome(orders: orders)
        while true {
            outcome.starts += 1
            try #require(outcome.starts <= 300, "the orders never all ended")
            let status = try await runChild(options(outcome.starts))
            switch status {
            case .exited(0):
                let queue = try JobQueue(path: database)
                outcome.records = try queue.jobs()
                return outcome
            case .killed(SIGKILL): outcome.kills += 1
            default:
                Issue.record("the child ended \(status)")
                return outcome
            }
        }
    }

    enum Ending: Equatable {
        case exited(Int32)
        case killed(Int32)
    }

    private func runChild(_ options: [String]) async throws -> Ending {
        let process = Process()
        process.executableURL = try CrashChild.url()
        process.arguments = [database, "\(server.port)", "\(orders)"] + options
        // What the child says (the point it was killed at) is not the test's output.
        process.standardError = FileHandle.nullDevice
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        try process.run()
        for await _ in ended.stream {}
        return process.terminationReason == .uncaughtSignal
            ? .killed(process.terminationStatus) : .exited(process.terminationStatus)
    }
}

enum CrashChild {
    static let name = "conductor-jobs-crash-child"

    /// The child's executable, built beside the test bundle (`swift test` builds every target).
    static func url() throws -> URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: name])
    }
}

// The child process of the job queue's crash tests (Tests/ConductorJobsTests/JobCrashTests.swift):
// it opens a queue file, makes sure the test's orders are enqueued, and places them through a
// request gate with the test's order server on loopback — until it is killed, or every order
// has ended. Not a product: only the tests build and run it.
//
//     conductor-jobs-crash-child DATABASE PORT ORDERS [--crash POINT:N | --crash-seed SEED:PERCENT]
//
// `--crash POINT:N` kills the process with SIGKILL, as the system kills an app, the Nth time it
// reaches the named crash point (one of the queue's, or `afterEnqueue`: an order just committed);
// `--crash-seed SEED:PERCENT` kills it at a crash point drawn by a generator seeded with SEED,
// each point reached with probability PERCENT. Every third order is chained after the one before
// it. Exit status 0: every order ended; the test judges how.
import ConductorCore
import ConductorGate
import ConductorJobs
import ConductorURLSession
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct PlaceOrder: JobKind {
    static let name = "place-order"
    struct Payload: Codable, Sendable { var order: Int }
}

/// When the process kills itself.
enum CrashPlan: Sendable {
    case never
    case at(point: String, count: Int)
    case seeded(seed: UInt64, percent: UInt64)
}

struct Arguments {
    var database = ""
    var port = 0
    var orders = 0
    var crash = CrashPlan.never

    static func parse() -> Arguments {
        let words = Array(CommandLine.arguments.dropFirst())
        guard words.count >= 3, let port = Int(words[1]), let orders = Int(words[2]) else { usage() }
        var arguments = Arguments(database: words[0], port: port, orders: orders)
        var rest = words.dropFirst(3)
        while let option = rest.popFirst() {
            guard let value = rest.popFirst() else { usage() }
            let parts = value.split(separator: ":").map(String.init)
            guard parts.count == 2 else { usage() }
            switch option {
            case "--crash":
                guard let count = Int(parts[1]) else { usage() }
                arguments.crash = .at(point: parts[0], count: count)
            case "--crash-seed":
                guard let seed = UInt64(parts[0]), let percent = UInt64(parts[1]) else { usage() }
                arguments.crash = .seeded(seed: seed, percent: percent)
            default: usage()
            }
        }
        return arguments
    }

    static func usage() -> Never {
        let text =
            "usage: conductor-jobs-crash-child DATABASE PORT ORDERS [--crash POINT:N | --crash-seed SEED:PERCENT]\n"
        FileHandle.standardError.write(Data(text.utf8))
        exit(2)
    }
}

/// Counts the crash points reached and kills the process where the plan says.
final class Crasher: Sendable {
    private struct State {
        var reached: [String: Int] = [:]
        var generator: SplitMix64
    }

    private let plan: CrashPlan
    private let state: Lock<State>

    init(_ plan: CrashPlan) {
        self.plan = plan
        var seed: UInt64 = 0
        if case .seeded(let value, _) = plan { seed = value }
        state = Lock(State(generator: SplitMix64(seed: seed)))
    }

    func reached(_ point: String) {
        let dies = state.withLock { state in
            state.reached[point, default: 0] += 1
            switch plan {
            case .never: return false
            case .at(let target, let count): return target == point && state.reached[point] == count
            case .seeded(_, let percent): return state.generator.next() % 100 < percent
            }
        }
        if dies {
            FileHandle.standardError.write(Data("killed at \(point)\n".utf8))
            kill(getpid(), SIGKILL)
        }
    }
}

let arguments = Arguments.parse()
let crasher = Crasher(arguments.crash)
let authority = "127.0.0.1:\(arguments.port)"

let sessionConfiguration = URLSessionConfiguration.ephemeral
sessionConfiguration.timeoutIntervalForRequest = 30
let session = URLSession(configuration: sessionConfiguration)
// A POST with an `Idempotency-Key` is one the gate may send again after a transport failure:
// the server keeps the first answer for a key and performs nothing twice.
let gate = try RequestGate<String>(
    transport: URLSessionTransport(session: session), credential: "token",
    authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
    refresh: { _ in "token" })

let queue = try JobQueue(path: arguments.database)
queue.setCrashHook { point, _ in crasher.reached(point.rawValue) }
queue.register(PlaceOrder.self) { payload, context in
    var request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/orders")
    request.headerFields[.idempotencyKey] = context.idempotencyKey
    // The gate's standard verdict throws for any answer but a success.
    _ = try await gate.send(request, body: .bytes(Array("\(payload.order)".utf8)))
}

// The orders, each enqueued once across every restart: by its unique name, looked up among
// the jobs already in the file (a job that ended keeps its name in the file, where a unique
// name alone would let a second one in).
var ids: [Int: JobID] = [:]
for record in try queue.jobs() {
    if let name = record.uniqueName, let order = Int(name.dropFirst("order-".count)) { ids[order] = record.id }
}
for order in 0..<arguments.orders where ids[order] == nil {
    var options = JobOptions(unique: .keepExisting("order-\(order)"))
    if order % 3 == 2, let previous = ids[order - 1] { options.after = [previous] }
    ids[order] = try await queue.enqueue(PlaceOrder.self, .init(order: order), options: options)
    crasher.reached("afterEnqueue")
}
try await queue.start()
for order in 0..<arguments.orders {
    _ = try await queue.ended(ids[order]!)
}
await queue.shutdown()
session.finishTasksAndInvalidate()

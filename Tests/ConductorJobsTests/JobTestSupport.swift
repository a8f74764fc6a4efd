import ConductorCore
import ConductorTestKit
import Foundation

@testable import ConductorJobs

/// A kind whose payload is a number.
struct Echo: JobKind {
    static let name = "echo"
    struct Payload: Codable, Sendable, Equatable { var value: Int }
}

/// Another kind, for jobs that must not be confused with ``Echo``'s.
struct Other: JobKind {
    static let name = "other"
    struct Payload: Codable, Sendable { var text: String }
}

/// A kind nobody registers.
struct Ghost: JobKind {
    static let name = "ghost"
    struct Payload: Codable, Sendable {}
}

/// ``Echo``'s name with a payload that its stored JSON does not decode as.
struct EchoV2: JobKind {
    static let name = "echo"
    struct Payload: Codable, Sendable { var renamed: String }
}

struct Boom: Error, CustomStringConvertible {
    var attempt: Int
    var description: String { "Boom on attempt \(attempt)" }
}

/// A temporary file, a manual clock and a wall clock that moves with it.
struct JobHarness {
    let file = TemporaryFile("queue")
    let clock = ManualClock()
    static let origin = Date(timeIntervalSince1970: 1_000_000)

    var now: Date { Self.origin + clock.now.offset.seconds }

    func configuration(limit: Int = 4) -> JobQueueConfiguration {
        let clock = self.clock
        return JobQueueConfiguration(
            concurrencyLimit: limit, synchronous: .normal, busyTimeout: .milliseconds(200), clock: clock,
            now: { Self.origin + clock.now.offset.seconds }, telemetry: .disabled)
    }

    func queue(limit: Int = 4) throws -> JobQueue {
        try JobQueue(path: file.path, configuration: configuration(limit: limit))
    }
}

/// What handlers saw, in order, and a stream of it for a test to wait on.
final class Calls: Sendable {
    private let contexts = Lock<[JobContext]>([])
    let events: AsyncStream<JobContext>
    private let continuation: AsyncStream<JobContext>.Continuation

    init() {
        (events, continuation) = AsyncStream.makeStream(of: JobContext.self)
    }

    func record(_ context: JobContext) {
        contexts.withLock { $0.append(context) }
        continuation.yield(context)
    }

    var all: [JobContext] { contexts.withLock { $0 } }

    func of(_ id: JobID) -> [JobContext] { all.filter { $0.id == id } }
}

extension AsyncStream {
    /// The next element; fails the test if the stream ended.
    func first() async -> Element? {
        var iterator = makeAsyncIterator()
        return await iterator.next()
    }
}

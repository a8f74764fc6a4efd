import ConductorJobs
import ConductorTestKit
import Foundation
import Testing

@testable import DemoKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The offline-order story and what it stands on: the server's orders, de-duplicated by key;
/// the mirrors' outage; the child process and its guard; the whole story, with the real
/// `conductor-demo` as the app, killed and restarted.
@Suite struct OfflineOrderTests {
    // MARK: - The order book

    @Test func theSameKeyPlacesOneOrderAndAnswersItAgain() {
        var book = OrderBook()
        #expect(book.take(key: "k1") == .order(number: 1, repeated: false))
        #expect(book.take(key: "k1") == .order(number: 1, repeated: true))
        #expect(book.take(key: "k2") == .order(number: 2, repeated: false))
        #expect(book.counts.placed == 2)
        #expect(book.counts.accepted == 3)
        #expect(book.counts.keys == ["k1", "k2"])
    }

    @Test func anOrderWithoutAKeyIsRejectedAndPlacesNothing() {
        var book = OrderBook()
        #expect(book.take(key: nil) == .missingKey)
        #expect(book.take(key: "") == .missingKey)
        #expect(book.counts.rejected == 2)
        #expect(book.counts.placed == 0)
    }

    @Test func whileTheMirrorsAreDownEveryOrderIsRefusedAndCounted() {
        var book = OrderBook()
        book.mirrorsDown = true
        #expect(book.take(key: "k1") == .refused)
        #expect(book.take(key: nil) == .refused)
        book.mirrorsDown = false
        #expect(book.take(key: "k1") == .order(number: 1, repeated: false))
        #expect(book.counts.refused == 2)
        #expect(book.counts.requests == 3)
        #expect(book.counts.placed == 1)
    }

    // MARK: - The server, over HTTP

    /// A `POST /orders` to `authority`: the status, the body, and whether it was a replay.
    static func order(
        _ authority: String, key: String?, session: URLSession, path: String = "/orders", method: String = "POST"
    ) async throws -> (status: Int, body: String, replayed: Bool) {
        var request = URLRequest(url: URL(string: "http://\(authority)\(path)")!)
        request.httpMethod = method
        if method == "POST" { request.httpBody = Data(#"{"orderID":"A-1"}"#.utf8) }
        if let key { request.setValue(key, forHTTPHeaderField: "Idempotency-Key") }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        let replayed = http.value(forHTTPHeaderField: "Idempotent-Replayed") == "true"
        return (http.statusCode, String(decoding: data, as: UTF8.self), replayed)
    }

    /// Both mirrors share the orders: a key placed on one is a repeat on the other.
    @Test func theServerPlacesOneOrderPerKeyOnEitherMirror() async throws {
        let server = try await DemoServer.start()
        let session = URLSession(configuration: .ephemeral)
        let a = server.authorities[0].authority
        let b = server.authorities[1].authority
        let first = try await Self.order(a, key: "key-1", session: session)
        let again = try await Self.order(b, key: "key-1", session: session)
        let other = try await Self.order(a, key: "key-2", session: session)
        #expect(first.status == 201 && first.body == #"{"order":1}"# && !first.replayed)
        #expect(again.status == 201 && again.body == #"{"order":1}"# && again.replayed)
        #expect(other.body == #"{"order":2}"#)
        #expect(server.orders.placed == 2)
        #expect(server.orders.accepted == 3)
        session.finishTasksAndInvalidate()
        await server.stop()
    }

    @Test func theServerAnswers400ToAnOrderWithoutAKey() async throws {
        let server = try await DemoServer.start()
        let session = URLSession(configuration: .ephemeral)
        let reply = try await Self.order(server.authorities[0].authority, key: nil, session: session)
        #expect(reply.status == 400)
        #expect(reply.body.contains("Idempotency-Key"))
        #expect(server.orders.rejected == 1 && server.orders.placed == 0)
        session.finishTasksAndInvalidate()
        await server.stop()
    }

    /// Down, both mirrors answer 503 to everything, orders included, and place nothing; back
    /// up, the same key places its order.
    @Test func mirrorsDownRefuseEveryRequestUntilTheyAreBack() async throws {
        let server = try await DemoServer.start()
        let session = URLSession(configuration: .ephemeral)
        server.setMirrorsDown(true)
        for (_, authority) in server.authorities {
            #expect(try await Self.order(authority, key: "key-1", session: session).status == 503)
            let ping = try await Self.order(authority, key: nil, session: session, path: "/ping", method: "GET")
            #expect(ping.status == 503)
        }
        #expect(server.orders.refused == 2 && server.orders.placed == 0)
        server.setMirrorsDown(false)
        #expect(try await Self.order(server.authorities[1].authority, key: "key-1", session: session).status == 201)
        #expect(server.orders.placed == 1)
        session.finishTasksAndInvalidate()
        await server.stop()
    }

    // MARK: - Waiting and the child process

    /// A bounded wait ends with a failure that names what it waited for, when the clock says so.
    @Test func aWaitThatIsNeverSatisfiedFailsAtItsLimitNamingWhatItWaitedFor() async throws {
        let clock = ManualClock()
        let count = Watched(0)
        let waited = Task {
            try await count.first(where: { $0 >= 3 }, within: .seconds(30), clock: clock, waitingFor: "three things")
        }
        count.update { $0 += 1 }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(30))
        let error = await #expect(throws: DemoFailure.self) { try await waited.value }
        #expect(error?.description == "waited 30.0 s for three things, in vain")
    }

    @Test func aWaitReturnsTheFirstValueThatSatisfiesIt() async throws {
        let count = Watched(0)
        async let waited = count.first(where: { $0 >= 2 }, within: .seconds(30), waitingFor: "two")
        count.update { $0 += 1 }
        count.update { $0 += 1 }
        #expect(try await waited == 2)
    }

    @Test func outputIsCutIntoLinesAndTheLastUnfinishedOneComesAtTheEnd() {
        var partial = Data()
        #expect(AppProcess.completeLines(appending: Data("one\ntw".utf8), to: &partial) == ["one"])
        #expect(AppProcess.completeLines(appending: Data("o\nthr".utf8), to: &partial) == ["two"])
        #expect(AppProcess.completeLines(appending: Data("ee".utf8), to: &partial) == [])
        #expect(AppProcess.completeLines(appending: Data(), to: &partial) == ["three"])
    }

    /// A child that hangs is killed at the guard's limit, on the guard's clock.
    @Test func theGuardKillsAChildThatOutlivesItsLimit() async throws {
        let clock = ManualClock()
        let app = try AppProcess.launch(
            URL(fileURLWithPath: "/bin/sleep"), arguments: ["600"], killAfter: .seconds(60), clock: clock
        ) { _ in }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(60))
        #expect(try await app.ended(within: .seconds(30)) == .killed(signal: SIGKILL))
    }

    // MARK: - The whole story

    /// The story with the real app: killed with SIGKILL while the mirrors are down, restarted
    /// once they are back, and the order is placed exactly once, under the job's one key.
    @Test func anOrderPlacedOfflineSurvivesAKillAndIsPlacedOnce() async throws {
        let lines = Guarded<[String]>([])
        let report = try await runOfflineOrder(OfflineOrderOptions(executable: try Self.demoExecutable())) { line in
            lines.withLock { $0.append(line) }
        }
        #expect(report.passed, "\(report.verdict)")
        #expect(report.firstRun == .killed(signal: SIGKILL))
        #expect(report.secondRun == .exited(0))
        #expect(report.orders.placed == 1)
        #expect(report.orders.refused >= 4)
        let job = try #require(report.job)
        #expect(job.state == .succeeded)
        #expect(job.deliveries == 2)
        #expect(report.orders.keys == [job.idempotencyKey])
        let said = lines.withLock { $0 }
        #expect(said.contains { $0.contains("found job \(job.id) still running") })
        #expect(said.filter { $0.contains("placed order #1") }.count >= 1)
    }

    /// `conductor-demo`, built beside the test bundle (this target depends on it).
    static func demoExecutable() throws -> URL {
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        folders += Bundle.allBundles.filter { $0.bundlePath.hasSuffix(".xctest") }.map {
            $0.bundleURL.deletingLastPathComponent()
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent("conductor-demo")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw DemoFailure("no conductor-demo beside the tests in \(folders.map(\.path))")
    }
}

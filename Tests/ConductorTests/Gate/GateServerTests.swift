import Conductor
import ConductorURLSession
import HTTPTypes
import Synchronization
import Testing

/// The gate against a real HTTP server on 127.0.0.1, through the URLSession transport.
@Suite struct GateServerTests {
    static func makeGate(
        _ server: TokenServer,
        credential: String? = "stale",
        maxConcurrent: Int? = nil
    ) throws(GateError) -> RequestGate<String> {
        let transport = URLSessionTransport()
        let authority = server.authority
        var configuration = GateConfiguration(maxConcurrentRequests: maxConcurrent, jitterSeed: 7)
        configuration.eventRetention = 10_000
        return try RequestGate(
            transport: transport,
            credential: credential,
            configuration: configuration,
            authorize: { request, token in request.headerFields[.authorization] = "Bearer \(token)" },
            refresh: { _ in
                // The refresh talks to the server directly, never through the gate.
                let request = HTTPRequest(method: .post, scheme: "http", authority: authority, path: "/token")
                let (response, body) = try await transport.send(request, body: .bytes([])).headAndBody
                guard response.status == .ok else { throw RefreshRejected(status: response.status.code) }
                return String(decoding: body, as: UTF8.self)
            }
        )
    }

    static func request(_ server: TokenServer, _ path: String, tag: String) -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: "http", authority: server.authority, path: path)
        request.headerFields[HTTPField.Name("X-Tag")!] = tag
        return request
    }

    @Test func hundredConcurrentRequestsOnAnExpiredTokenRefreshOnceAndAllSucceed() async throws {
        let server = try await TokenServer.start()
        server.releaseHeld()
        let gate = try Self.makeGate(server)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<100 {
                group.addTask {
                    try await gate.send(Self.request(server, "/data/\(index)", tag: "\(index)")).response.status.code
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 100 && statuses.allSatisfy { $0 == 200 })
        #expect(server.refreshRequests == 1)
        #expect(gate.credentialVersion == 2)
        // Every request was last sent with the newest credential.
        let lastToken = Dictionary(server.hits.map { ($0.requestTag ?? "", $0.token) }, uniquingKeysWith: { $1 })
        #expect(lastToken.count == 100)
        #expect(lastToken.values.allSatisfy { $0 == "t1" })
        await server.stop()
    }

    @Test func aFailedRefreshFailsEveryRequestOnceAndNothingIsResentWithTheOldToken() async throws {
        let server = try await TokenServer.start()
        server.releaseHeld()
        server.setFailRefresh(true)
        let gate = try Self.makeGate(server)
        let codes = await withTaskGroup(of: GateError.Code?.self) { group in
            for index in 0..<100 {
                group.addTask {
                    do {
                        _ = try await gate.send(Self.request(server, "/data/\(index)", tag: "\(index)"))
                        return nil
                    } catch {
                        return (error as? GateError)?.code
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(codes.count == 100 && codes.allSatisfy { $0 == GateError.Code.refreshFailed })
        #expect(server.refreshRequests == 1)
        // No request reached the server twice, so none was re-sent with the old token.
        let perTag = Dictionary(grouping: server.hits, by: { $0.requestTag ?? "" })
        #expect(perTag.values.allSatisfy { $0.count == 1 })
        let failures = gate.recordedEvents.filter { if case .failure = $0 { true } else { false } }
        #expect(failures.count == 100)
        await server.stop()
    }

    /// OkHttp's deadlock: requests filling the concurrency limit must not keep the refresh out.
    @Test func uniqueRefreshRunsWhileTheConcurrencyLimitIsFullOfWaitingRequests() async throws {
        let server = try await TokenServer.start()
        let gate = try Self.makeGate(server, credential: nil, maxConcurrent: 2)
        // Get t1 first, then make the two slots busy with held requests and queue ten more.
        _ = try await gate.send(Self.request(server, "/data/warm-up", tag: "warm-up"))
        let results = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        try await gate.send(Self.request(server, "/data/held-\(index)", tag: "\(index)"))
                            .response.status.code
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        await server.held(atLeast: 2)
        await gate.queuedAttempts(atLeast: 10)
        server.expireToken()
        server.releaseHeld()
        let statuses = try await results.value
        #expect(statuses.count == 12 && statuses.allSatisfy { $0 == 200 })
        #expect(server.refreshRequests == 2)  // the first credential, and one refresh
        #expect(gate.credentialVersion == 2)
        await server.stop()
    }

    @Test func queuedRequestsDrainInPriorityOrder() async throws {
        let server = try await TokenServer.start()
        let gate = try Self.makeGate(server, credential: nil, maxConcurrent: 1)
        _ = try await gate.send(Self.request(server, "/data/warm-up", tag: "warm-up"))
        let blocker = Task { try await gate.send(Self.request(server, "/data/held-blocker", tag: "blocker")) }
        await server.held(atLeast: 1)
        var tasks: [Task<GateResponse, any Error>] = []
        let lanes: [(String, RequestPriority)] = [
            ("low", .low), ("default", .default), ("high", .high), ("low2", .low), ("high2", .high),
        ]
        for (count, (tag, priority)) in lanes.enumerated() {
            tasks.append(
                Task { try await gate.send(Self.request(server, "/data/\(tag)", tag: tag), priority: priority) })
            await gate.queuedAttempts(atLeast: count + 1)
        }
        server.releaseHeld()
        _ = try await blocker.value
        for task in tasks { _ = try await task.value }
        let order = server.hits.compactMap(\.requestTag).filter { !["warm-up", "blocker"].contains($0) }
        #expect(order == ["high", "high2", "default", "low", "low2"])
        await server.stop()
    }

    @Test func fiftyIdenticalRequestsCoalesceIntoOneServerHit() async throws {
        let server = try await TokenServer.start()
        let gate = try Self.makeGate(server, credential: nil)
        _ = try await gate.send(Self.request(server, "/data/warm-up", tag: "warm-up"))
        let joined = Task {
            var count = 0
            for await event in gate.events {
                if case .coalesced = event { count += 1 }
                if count == 49 { return }
            }
        }
        let results = Task {
            try await withThrowingTaskGroup(of: [UInt8].self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        try await gate.send(
                            Self.request(server, "/data/held-avatar", tag: "avatar"),
                            coalescingKey: "avatar"
                        ).body
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        await server.held(atLeast: 1)
        await joined.value
        server.releaseHeld()
        let bodies = try await results.value
        #expect(bodies.count == 50 && Set(bodies) == [Array("/data/held-avatar".utf8)])
        #expect(server.hits.filter { $0.requestTag == "avatar" }.count == 1)
        await server.stop()
    }
}

struct RefreshRejected: Error {
    var status: Int
}

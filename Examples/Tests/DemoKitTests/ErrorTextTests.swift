import Conductor
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import DemoKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Errors print as one short line: never a `Foundation` error's dump.
@Suite struct ErrorTextTests {
    static let dump: [String: any Sendable] = [
        NSLocalizedDescriptionKey: String(repeating: "Could not connect to the server. ", count: 10),
        "NSErrorFailingURLStringKey": "http://127.0.0.1:50412/ping",
    ]

    static func expectShort(_ line: String) {
        #expect(line.count < 120, "\(line)")
        #expect(!line.contains("userInfo") && !line.contains("Domain=") && !line.contains("\n"), "\(line)")
    }

    // MARK: - Mapping

    @Test func connectionErrorsNameTheHost() {
        let urlError = URLError(.cannotConnectToHost)
        #expect(ErrorText.short(urlError, authority: "127.0.0.1:50412") == "could not connect to 127.0.0.1:50412")
        let nsError = NSError(
            domain: NSURLErrorDomain, code: URLError.Code.cannotConnectToHost.rawValue, userInfo: Self.dump)
        #expect(ErrorText.short(nsError, authority: "127.0.0.1:50412") == "could not connect to 127.0.0.1:50412")
        #expect(ErrorText.short(URLError(.timedOut), authority: "h:1") == "h:1 did not answer in time")
    }

    @Test func anyOtherErrorIsOneShortLine() {
        Self.expectShort(ErrorText.short(NSError(domain: "SomeDomain", code: 7, userInfo: Self.dump)))
        Self.expectShort(ErrorText.short(DemoFailure(String(repeating: "long ", count: 60) + "\nsecond line")))
        #expect(ErrorText.short(CancellationError()) == "cancelled")
    }

    /// The transport shortens what `URLSession` throws, so the gate's messages quoting it stay
    /// short; cancellation passes through, since the gate tells it apart.
    @Test func theDemoTransportShortensErrorsButNotCancellation() async {
        struct Failing: GateTransport {
            let error: any Error & Sendable
            func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
                throw error
            }
        }
        let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:9", path: "/ping")
        let nsError = NSError(
            domain: NSURLErrorDomain, code: URLError.Code.cannotConnectToHost.rawValue, userInfo: Self.dump)
        await #expect(throws: NetworkFailure.self) {
            try await DemoTransport(base: Failing(error: nsError)).send(request, body: nil)
        }
        do {
            _ = try await DemoTransport(base: Failing(error: nsError)).send(request, body: nil)
        } catch {
            #expect("\(error)" == "could not connect to 127.0.0.1:9")
        }
        await #expect(throws: CancellationError.self) {
            try await DemoTransport(base: Failing(error: CancellationError())).send(request, body: nil)
        }
    }

    // MARK: - The offline scenario

    @Test func theOfflineScenarioPrintsShortErrors() async throws {
        let details = Mutex<[String]>([])
        let report = try await runDemo(DemoOptions(scenario: .offlineWithCache, seed: 7, latencyScale: 0.1)) { event in
            if case .ended(_, _, _, _, let detail) = event { details.withLock { $0.append(detail) } }
        }
        #expect(report.passed, "\(report.verdict)")
        let lines = details.withLock { $0 } + report.timeline.rows.map(\.detail)
        #expect(lines.contains { $0.contains("could not connect to 127.0.0.1:") })
        for line in lines { Self.expectShort(line) }
    }
}

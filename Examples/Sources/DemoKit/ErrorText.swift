import Conductor
import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Errors as one short human line: "could not connect to 127.0.0.1:50412", never a
/// `Foundation` error's dump with its `userInfo`.
///
/// ```swift
/// ErrorText.short(URLError(.cannotConnectToHost), authority: "127.0.0.1:50412")
/// // "could not connect to 127.0.0.1:50412"
/// ```
public enum ErrorText {
    /// The longest line any error becomes; longer descriptions are cut.
    public static let limit = 100

    /// `error` in a few words; `authority` names the host when the error is about one.
    public static func short(_ error: any Error, authority: String? = nil) -> String {
        let host = authority ?? "the server"
        switch error {
        case let error as NetworkFailure:
            return error.description
        case let error as GateError:
            return cut(error.message)
        case is CancellationError:
            return "cancelled"
        case let error as URLError:
            return network(code: error.code.rawValue, host: host)
        default:
            // Linux's URLSession reports an `NSError` in the URL domain, which does not always
            // cast to `URLError`.
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain { return network(code: nsError.code, host: host) }
            let text = String(describing: error)
            // Anything that still dumps a Foundation error gets its domain and code only.
            if text.contains("userInfo") || text.contains("Domain=") {
                return "\(nsError.domain) error \(nsError.code)"
            }
            return cut(text)
        }
    }

    /// The URL loading system's codes (`NSURLErrorDomain`) the demo can meet, in words.
    static func network(code: Int, host: String) -> String {
        switch URLError.Code(rawValue: code) {
        case .cannotConnectToHost: "could not connect to \(host)"
        case .timedOut: "\(host) did not answer in time"
        case .networkConnectionLost: "the connection to \(host) was lost"
        case .notConnectedToInternet: "no network connection"
        case .cannotFindHost, .dnsLookupFailed: "could not find \(host)"
        case .badServerResponse: "\(host) sent a response that could not be read"
        case .cancelled: "cancelled"
        case .badURL, .unsupportedURL: "the request's URL is not valid"
        default: "network error \(code) talking to \(host)"
        }
    }

    static func cut(_ text: String) -> String {
        let line = text.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
        return line.count <= limit ? line : String(line.prefix(limit - 1)) + "…"
    }
}

/// A transport error said in a few words; what ``DemoTransport`` throws in place of
/// `URLSession`'s, so the gate's messages that quote it stay short.
struct NetworkFailure: Error, CustomStringConvertible {
    let description: String
}

/// The demo's transport: `URLSession`, with its errors shortened (see ``ErrorText``).
/// Cancellation passes through unchanged: the gate tells it apart.
struct DemoTransport<Base: GateTransport>: GateTransport {
    let base: Base

    func send(_ request: HTTPRequest, body: GateRequestBody?) async throws -> GateTransportResponse {
        do {
            return try await base.send(request, body: body)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw NetworkFailure(description: ErrorText.short(error, authority: request.authority))
        }
    }
}

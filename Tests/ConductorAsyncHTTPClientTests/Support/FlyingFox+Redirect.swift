import FlyingFox
import Foundation

extension FlyingFox.HTTPResponse {
    /// For `/moved/<status>-<status>…`: the first status, to `/moved/` with the rest, or to
    /// `/public/landed` after the last: a chain of redirects a test can spell in its path.
    static func redirect(hops path: String) -> FlyingFox.HTTPResponse {
        let statuses = (path.split(separator: "/").last ?? "").split(separator: "-").compactMap { Int($0) }
        guard let status = statuses.first else { return FlyingFox.HTTPResponse(statusCode: .notFound) }
        let rest = statuses.dropFirst().map(String.init).joined(separator: "-")
        let location = rest.isEmpty ? "/public/landed" : "/moved/\(rest)"
        return FlyingFox.HTTPResponse(
            statusCode: HTTPStatusCode(status, phrase: "Redirect"), headers: [HTTPHeader("Location"): location])
    }
}

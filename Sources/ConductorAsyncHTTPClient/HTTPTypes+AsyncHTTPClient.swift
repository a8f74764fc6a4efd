import AsyncHTTPClient
import HTTPTypes
import NIOHTTP1

extension HTTPClientRequest {
    /// The request AsyncHTTPClient sends for `request`: its URL from scheme, authority and
    /// path, its method, and its header fields in order.
    init(_ request: HTTPRequest) throws(AsyncHTTPClientTransportError) {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw .invalidRequest(request, "it has no scheme or no authority, so no URL")
        }
        self.init(url: "\(scheme)://\(authority)\(request.path ?? "/")")
        method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields {
            headers.add(name: field.name.rawName, value: field.value)
        }
    }
}

extension HTTPResponse {
    /// The response head AsyncHTTPClient received. A field whose name HTTP types would not
    /// accept is left out.
    init(_ response: HTTPClientResponse) {
        var fields = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.init(
            status: HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase),
            headerFields: fields)
    }
}

extension HTTPRequest {
    /// Method and path, without the query: how an error names the request (never a header,
    /// so never a credential).
    var nameForErrors: String {
        let path = (path ?? "/").split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        return "\(method.rawValue) \(path)"
    }
}

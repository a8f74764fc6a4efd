import ConductorGate
import HTTPTypes

extension GateTransportResponse {
    /// The head and the body, for a test that reads both at once.
    var headAndBody: (HTTPResponse, [UInt8]) { (response, body) }
}

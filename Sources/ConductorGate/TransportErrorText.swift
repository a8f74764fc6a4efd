import Foundation

/// How a transport's error is written into a ``GateError``'s message and the gate's log lines.
///
/// A `URLError` is written as its code and the sentence URLSession gave it, never with the
/// rest of its user info: that holds the failing URL, query and user information included,
/// where a credential may sit (an API key in the query), and `"\(error)"` prints it all. The
/// error itself stays whole in ``GateError/underlyingError``.
enum TransportErrorText {
    static func describe(_ error: any Error) -> String {
        if let error = error as? URLError {
            let sentence = error.userInfo[NSLocalizedDescriptionKey] as? String
            return "URLError \(error.code.rawValue)\(sentence.map { ": \($0)" } ?? "")"
        }
        return "\(error)"
    }
}

/// Conductor's errors, whose code and message a saved report records apart. Each area's
/// error adopts it where it is declared; the saved-report module reads it.
package protocol CodedError: Error {
    /// The error's code as text: `"timedOut"`.
    var codeName: String { get }
    /// What the error says, without its type or code.
    var message: String { get }
}

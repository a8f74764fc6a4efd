/// What the transport threw on a request's last attempt, if that attempt ended in an error:
/// kept for the request's deadline, which ends the request from another task and reports it
/// as the `timedOut` error's cause (a refused connection, say, rather than no cause at all).
final class LastTransportError: Sendable {
    private let error = Lock<(any Error)?>(nil)

    /// The error the attempt that just ended threw; `nil` for an attempt that got a response.
    func record(_ error: (any Error)?) {
        self.error.withLock { $0 = error }
    }

    var value: (any Error)? { error.withLock { $0 } }
}

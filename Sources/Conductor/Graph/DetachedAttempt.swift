/// One attempt of a task whose body runs in a task of its own (it has a timeout, or belongs
/// to a launcher), raced against its timeout and against abandonment.
///
/// The state machine creates it the moment the attempt wins the right to start, so there is
/// no window in which the attempt runs unregistered. Abandoning it settles it as cancelled —
/// unless the body settled it first, which then is what gets reported — and cancels the body;
/// abandoned before its task exists, the body is not started at all.
final class DetachedAttempt: Sendable {
    enum Result: Sendable {
        case success(any Sendable)
        case failure(any Error)
        case timedOut(Duration)
        case cancelled
    }

    enum Abandonment {
        /// The attempt is settled as cancelled; the body, if it started, was cancelled and
        /// its result will be discarded.
        case abandoned
        /// The body (or the timeout) had already settled the attempt.
        case settledFirst
    }

    private enum State {
        case pending
        /// The body's task, once created.
        case started(Task<Void, Never>?)
        case abandoned
    }

    /// Settled exactly once: by the body, the timeout (the run's ``DeadlineTimer``), or
    /// abandonment.
    let result = OnceCell<Result>()
    private let state = Lock(State.pending)

    /// Starts the body in a task of its own, unless the attempt was abandoned first. Returns
    /// whether it started.
    func start(priority: TaskPriority, _ body: @escaping @Sendable () async throws -> any Sendable) -> Bool {
        let claimed = state.withLock { state -> Bool in
            guard case .pending = state else { return false }
            state = .started(nil)
            return true
        }
        guard claimed else { return false }
        let result = self.result
        // `Task {}` (never `Task.detached`) copies the worker's task-local values.
        let task = Task(executorPreference: TaskPlacement.executor, priority: priority) {
            // Settled before this task got a thread (timed out, or abandoned): the attempt
            // is over, so its body does not start late.
            guard result.value == nil else { return }
            do {
                result.resolve(.success(try await body()))
            } catch is CancellationError {
                result.resolve(.cancelled)
            } catch {
                result.resolve(.failure(error))
            }
        }
        let keep = state.withLock { state -> Bool in
            guard case .started = state else { return false }
            state = .started(task)
            return true
        }
        // Abandoned between the claim and now: the body may start, but cancelled.
        if !keep { task.cancel() }
        return true
    }

    /// Cancels the body once the attempt has settled, so a body left behind by a timeout
    /// does not run on unheeded.
    func cancelBody() {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard case .started(let task) = state else { return nil }
            return task
        }
        task?.cancel()
    }

    func abandon() -> Abandonment {
        let previous = state.withLock { state -> State in
            defer { state = .abandoned }
            return state
        }
        if case .started(let task?) = previous { task.cancel() }
        return result.resolve(.cancelled) ? .abandoned : .settledFirst
    }
}

import Tracing

/// Runs one task that is not plain — it has a timeout or retries, runs in a task of its own
/// or on the main actor, or is traced — through its attempts: each attempt's body (raced
/// against its timeout and abandonment when it runs in a task of its own), the backoff
/// between attempts, and the right to start the next one. It holds the task's parameters and
/// calls the run's storage for every step that touches the run, each under the run's lock.
struct AttemptLoop {
    /// How a task's attempts ended, and when its body ran: from just before the first attempt's
    /// body was called to just after the last one's returned (`never` if no body started).
    struct TaskEnd {
        var outcome: TaskOutcome
        var result: (any Sendable)?
        var startedAt: Int64
        var endedAt: Int64
    }

    /// When an attempt's body was called and when it returned, read on the worker.
    struct BodyTimes {
        var startedAt = GraphNodeTable.Node.never
        var endedAt: Int64 = 0
    }

    let storage: GraphRunStorage
    let assignment: GraphStateMachine.Assignment

    var node: Int { assignment.node }
    private var clock: ClockSource { storage.clock }

    func run() async -> TaskEnd {
        let retry = assignment.spec.retry
        var attempt = 1
        var firstStart = GraphNodeTable.Node.never
        // Abandoned (removed, or the run stopped) before this worker got here: its body never
        // starts, and no attempt span is made for it.
        if assignment.spec.runsInOwnTask, !attemptIsOpen(node, number: 1) {
            return TaskEnd(outcome: .cancelled, startedAt: firstStart, endedAt: clock.nanoseconds)
        }
        // So does a body under a deadline let go during the hop here (a child at another
        // priority): its task ended then.
        if assignment.spec.hasDeadlineOnWorker, !storage.read({ GraphDeadlines.holds(node, in: $0) }) {
            return TaskEnd(outcome: .cancelled, startedAt: firstStart, endedAt: clock.nanoseconds)
        }
        while true {
            let outcome: TaskOutcome
            let (result, times) = await runAttempt(attempt)
            if firstStart == GraphNodeTable.Node.never { firstStart = times.startedAt }
            func ended(_ outcome: TaskOutcome, _ value: (any Sendable)? = nil) -> TaskEnd {
                TaskEnd(outcome: outcome, result: value, startedAt: firstStart, endedAt: times.endedAt)
            }
            switch result {
            case .success(let value): return ended(.succeeded, value)
            case .cancelled: return ended(.cancelled)
            case .failure(let error): outcome = .failed(error)
            case .timedOut(let duration): outcome = .timedOut(after: duration)
            }
            if Task.isCancelled { return ended(.cancelled) }
            guard attempt < retry.maxAttempts else { return ended(outcome) }
            let delay = retry.backoff(after: attempt)
            let error: any Error =
                switch outcome {
                case .failed(let error): error
                default: GraphError.timedOut(storage.id(of: node), after: assignment.spec.timeout ?? .zero)
                }
            // The run stopped, or the task was removed and has ended.
            guard attemptFailed(node, attempt: attempt, error: error, delay: delay) else {
                return ended(.cancelled)
            }
            do {
                try await clock.purpose(.retryBackoff).sleep(for: delay)
            } catch {
                return TaskEnd(outcome: .cancelled, startedAt: firstStart, endedAt: clock.nanoseconds)
            }
            attempt += 1
            // Paused, or the body of the attempt before still holds the task's limits' places:
            // the next attempt waits, and its timeout starts with it.
            while true {
                let restart = clock.nanoseconds
                switch retryStarting(node, attempt: attempt, now: restart) {
                case .start: break
                case .refused: return TaskEnd(outcome: .cancelled, startedAt: firstStart, endedAt: restart)
                case .wait:
                    await awaitRetry()
                    continue
                }
                break
            }
        }
    }

    /// Runs one attempt; with a tracer, inside a span of its own whose context is the body's
    /// `ServiceContext.current` (a timed body's task copies it), so the user's spans nest
    /// under the attempt that made them.
    private func runAttempt(_ attempt: Int) async -> (AttemptInTask.Result, BodyTimes) {
        guard let tracer = storage.instruments?.tracer else {
            return await runAttemptBody(attempt)
        }
        // The span's start and end are the tracer's (user code): they happen outside the
        // body's times, so a slow tracer never shows as the task's run time.
        let span = RunInstruments.startAttempt(
            tracer, id: storage.id(of: node), attempt: attempt, placement: assignment.spec.placement)
        let (result, times) = await ServiceContext.$current.withValue(span.context) {
            await runAttemptBody(attempt)
        }
        RunInstruments.end(span, with: result)
        return (result, times)
    }

    /// Runs the body of one attempt and says when it ran: just before the body is called (for
    /// a body in a task of its own, just before that task is made) and just after its result
    /// is in (for such a body, once the worker has the result, the timeout's or abandonment's).
    private func runAttemptBody(_ attempt: Int) async -> (AttemptInTask.Result, BodyTimes) {
        let context = TaskContext(node: node, attempt: attempt, storage: storage)
        // Held strongly here: the body's task below may outlive the worker.
        let spec: TaskSpec = assignment.spec
        var times = BodyTimes()
        guard spec.runsInOwnTask else {
            let result: AttemptInTask.Result
            times.startedAt = clock.nanoseconds
            do {
                let value = try await spec.call(context)
                times.endedAt = clock.nanoseconds
                result = .success(value)
            } catch is CancellationError {
                times.endedAt = clock.nanoseconds
                result = .cancelled
            } catch {
                times.endedAt = clock.nanoseconds
                result = Task.isCancelled ? .cancelled : .failure(error)
            }
            // Under a deadline that ended the task first: the attempt's span says so.
            if let timeout = spec.timeout, storage.read({ $0.table.nodes[node].phase == .timedOut }) {
                return (.timedOut(timeout), times)
            }
            return (result, times)
        }
        return await runBodyInOwnTask(attempt, context: context, times: times)
    }

    /// A task of its own, raced against the timeout and against abandonment: whichever
    /// settles the attempt first (under the run's lock) wins, and the worker moves on without
    /// waiting for a body that ignores cancellation. Abandoned before this point, the body
    /// never starts. Its task copies the worker's task-local values and runs at the task's
    /// priority.
    private func runBodyInOwnTask(
        _ attempt: Int, context: TaskContext, times: BodyTimes
    ) async -> (AttemptInTask.Result, BodyTimes) {
        var times = times
        let (storage, node, spec) = (storage, node, assignment.spec)
        let startedAt = clock.nanoseconds
        if case .settled(let result) = claimAttempt(node, number: attempt) {
            times.endedAt = clock.nanoseconds
            return (result, times)
        }
        times.startedAt = startedAt
        // `Task {}` (never `Task.detached`) copies the worker's task-local values.
        let body = Task(executorPreference: TaskPlacement.executor, priority: spec.priority) {
            // Settled before this task got a thread (timed out, or abandoned): the attempt
            // is over, so its body does not start late.
            guard Self.bodyBegins(node, number: attempt, in: storage) else { return }
            let result: AttemptInTask.Result
            do {
                result = .success(try await spec.call(context))
            } catch is CancellationError {
                result = .cancelled
            } catch {
                result = .failure(error)
            }
            Self.bodyReturned(node, number: attempt, with: result, in: storage)
        }
        // Abandoned or timed out between the claim and now: the body may start, but cancelled.
        if !attachAttemptBody(body, of: node, number: attempt) { body.cancel() }
        var deadline: DeadlineTimer.Token?
        if let timeout = spec.timeout {
            deadline = storage.timer.schedule(after: timeout) {
                Self.settleAttempt(node, number: attempt, with: .timedOut(timeout), in: storage)
            }
        }
        let result = await awaitAttempt(node, number: attempt)
        times.endedAt = clock.nanoseconds
        // A body left behind by its timeout does not run on unheeded.
        body.cancel()
        if let deadline { storage.timer.cancel(deadline) }
        return (result, times)
    }
}

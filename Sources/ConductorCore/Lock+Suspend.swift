extension Lock where Value: ~Copyable {
    /// Suspends the calling task on a continuation that one transition either registers in the
    /// locked state or answers at once — the register-under-lock, cancelled-before-registration
    /// and remove-on-cancel race, handled here once for every primitive.
    ///
    /// - `decide` runs under the lock, only if the task is not cancelled yet, with a
    ///   ``WaiterSet/Waiter`` to keep (`.wait`) or not (`.resume`).
    /// - `cancelledNow` runs under the lock instead when the task is already cancelled.
    /// - `cancelled` runs under the lock when the task is cancelled after it registered (or
    ///   while it registers): it takes waiter `id` out of the state, if a transition has not
    ///   let it go already, and returns what to do once the lock is released — resume that
    ///   waiter, and whatever its leaving set off.
    /// - `perform` carries out the decision's effect once the lock is released, before the
    ///   waiter is resumed (a decision that resumes at once), or right after registering.
    ///
    /// The cancellation handler takes the same lock, so either `decide` sees the cancellation
    /// or the handler finds the waiter: no waiter is left behind and none is resumed twice.
    @inlinable package borrowing func suspend<Output: Sendable, Effect: Sendable>(
        _ decide: (inout Value, WaiterSet<Output>.Waiter) -> SuspensionDecision<Output, Effect>,
        cancelledNow: (inout Value) -> (Output, Effect),
        perform: (Effect) -> Void = { _ in },
        cancelled: @escaping @Sendable (inout Value, UInt64) -> (@Sendable () -> Void)?
    ) async -> Output {
        let id = WaiterID.next()
        return await withTaskCancellationHandler {
            await Self.withContinuation { (continuation: WaiterSet<Output>.Continuation) in
                let waiter = WaiterSet<Output>.Waiter(id: id, continuation: continuation)
                let decision = withLock { value -> SuspensionDecision<Output, Effect> in
                    if Task.isCancelled {
                        let (output, effect) = cancelledNow(&value)
                        return .resume(output, effect)
                    }
                    return decide(&value, waiter)
                }
                switch decision {
                case .wait(let effect):
                    perform(effect)
                case .resume(let output, let effect):
                    perform(effect)
                    continuation.resume(returning: output)
                }
            }
        } onCancel: {
            withLock { value in cancelled(&value, id) }?()
        }
    }

    /// `withCheckedContinuation` in debug builds, `withUnsafeContinuation` in release builds:
    /// see ``WaiterSet/Continuation``.
    @inlinable static func withContinuation<Output: Sendable>(
        _ body: (WaiterSet<Output>.Continuation) -> Void
    ) async -> Output {
        #if DEBUG
            await withCheckedContinuation(body)
        #else
            await withUnsafeContinuation(body)
        #endif
    }
}

extension Lock where Value: ~Copyable {
    /// ``suspend(_:cancelledNow:perform:cancelled:)`` for a wait that cancelling the task
    /// does not end: `decide` runs under the lock and registers the waiter (`.wait`) or
    /// answers at once (`.resume`); only a later transition resumes a registered waiter.
    ///
    /// For waits that must see something through (an outcome the caller has already asked
    /// for by cancelling, a shutdown's report), so there is no cancellation race to handle.
    @inlinable package borrowing func suspendIgnoringCancellation<Output: Sendable, Effect: Sendable>(
        _ decide: (inout Value, WaiterSet<Output>.Waiter) -> SuspensionDecision<Output, Effect>,
        perform: (Effect) -> Void = { _ in }
    ) async -> Output {
        let id = WaiterID.next()
        return await Self.withContinuation { (continuation: WaiterSet<Output>.Continuation) in
            let waiter = WaiterSet<Output>.Waiter(id: id, continuation: continuation)
            switch withLock({ value in decide(&value, waiter) }) {
            case .wait(let effect):
                perform(effect)
            case .resume(let output, let effect):
                perform(effect)
                continuation.resume(returning: output)
            }
        }
    }
}

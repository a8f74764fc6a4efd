public import Dispatch

/// Where Conductor calls your callbacks: observers, completions and delegates.
///
/// Callbacks are never called while Conductor holds a lock, and events that arrive
/// together are delivered together in one hop, so a main-actor observer costs one hop
/// per batch rather than one per event.
///
/// ```swift
/// run.observe(on: .mainActor) { event in MainActor.assumeIsolated { label.text = "\(event)" } }
/// run.observe(on: .queue(myQueue)) { event in log(event) }
/// run.observe(on: .actor(cache)) { event in /* … */ }
/// ```
public struct CallbackTarget: Sendable {
    package enum Kind: Sendable {
        case mainActor
        case actor(any Actor)
        case queue(DispatchQueue)
        case immediate
    }

    package let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// The main actor: for UI code.
    public static var mainActor: CallbackTarget { CallbackTarget(.mainActor) }

    /// The executor of `actor`, for example an actor bound to a queue with ``QueueExecutor``.
    public static func actor(_ actor: any Actor) -> CallbackTarget { CallbackTarget(.actor(actor)) }

    /// A dispatch queue, for code that still lives on GCD.
    public static func queue(_ queue: DispatchQueue) -> CallbackTarget { CallbackTarget(.queue(queue)) }

    /// Whatever thread produced the event, right after Conductor released its locks.
    /// Cheapest; the callback must be quick and thread-safe.
    public static var immediate: CallbackTarget { CallbackTarget(.immediate) }

    /// Runs `body` on this target, without waiting for it.
    package func dispatch(_ body: @escaping @Sendable () -> Void) {
        switch kind {
        case .immediate:
            body()
        case .queue(let queue):
            queue.async(execute: body)
        case .mainActor:
            Task { @MainActor in body() }
        case .actor(let actor):
            Task(executorPreference: TaskPlacement.executor) { await runIsolated(to: actor, body) }
        }
    }

    /// Runs `body` on this target and waits until it has run.
    package func perform(_ body: @escaping @Sendable () -> Void) async {
        switch kind {
        case .immediate:
            body()
        case .queue(let queue):
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async {
                    body()
                    continuation.resume()
                }
            }
        case .mainActor:
            await MainActor.run { body() }
        case .actor(let actor):
            await runIsolated(to: actor, body)
        }
    }
}

private func runIsolated(to actor: isolated any Actor, _ body: @Sendable () -> Void) {
    body()
}

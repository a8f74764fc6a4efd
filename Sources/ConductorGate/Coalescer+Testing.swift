/// The coalescer's test hook. Its waiters live in the coalescer's state, empty until a test
/// waits.
extension Coalescer {
    /// Test hook: suspends until at least `count` callers are subscribed to flights, or the
    /// waiting task is cancelled.
    func subscribers(atLeast count: Int) async {
        await state.wait(untilCountOf: { $0.subscriberCount }, reaches: count, waiters: \.probeWaiters)
    }
}

public import Synchronization

/// A flag that can be claimed once: the first `claim()` returns `true`, every later one `false`.
///
/// For work that must happen exactly once *before* an outcome is published — an event that
/// must be in the journal before the caller it describes returns, say — where ``OnceCell``
/// would publish first.
@usableFromInline package final class OnceFlag: Sendable {
    @usableFromInline let claimed = Atomic<Bool>(false)

    @inlinable package init() {}

    @inlinable package func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }
}

#if DEBUG
    #if canImport(Darwin)
        import Darwin
    #elseif canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Where a ``Lock`` was made. Debug builds only: one per lock, kept alive by the lock itself.
    @usableFromInline package final class LockSite: Sendable {
        package let fileID: StaticString
        package let line: UInt

        @usableFromInline package init(fileID: StaticString, line: UInt) {
            self.fileID = fileID
            self.line = line
        }

        package var location: String { "\(fileID):\(line)" }
    }

    /// The debug-build check behind ``Lock``'s one-lock-at-a-time rule.
    ///
    /// Each thread remembers the innermost lock it holds in a thread-local slot (a POSIX
    /// thread-specific value, the same on Apple platforms and Linux). Taking a lock while the
    /// slot is filled is a nesting: it traps, naming where both locks were made. Releasing
    /// restores what the slot held before, so a nesting reported instead of trapping (in a
    /// test) is checked again one level down. `withLock` bodies never suspend, so acquire and
    /// release always happen on the same thread.
    @usableFromInline package enum LockNesting {
        /// The innermost lock the thread holds: an unretained `LockSite`, kept alive by the
        /// lock that is borrowed for as long as it is held.
        private static let heldKey = makeKey()
        /// A test's reporter that replaces the trap on this thread (see `NestedLockAcquisition+Testing.swift`).
        private static let reporterKey = makeKey()

        private static func makeKey() -> pthread_key_t {
            var key = pthread_key_t()
            let status = pthread_key_create(&key, nil)
            precondition(status == 0, "no thread-local slot for the nested-lock check (error \(status))")
            return key
        }

        /// Records `site` as the lock this thread now holds innermost and returns what it held
        /// before, for ``released(restoring:)``. When `checked`, any held lock is a nesting.
        @usableFromInline package static func acquiring(_ site: LockSite, checked: Bool) -> UnsafeMutableRawPointer? {
            let outer = pthread_getspecific(heldKey)
            if checked, let outer {
                let held = Unmanaged<LockSite>.fromOpaque(outer).takeUnretainedValue()
                report(NestedLockAcquisition(held: held.location, acquired: site.location))
            }
            pthread_setspecific(heldKey, Unmanaged.passUnretained(site).toOpaque())
            return outer
        }

        @usableFromInline package static func released(restoring outer: UnsafeMutableRawPointer?) {
            pthread_setspecific(heldKey, outer)
        }

        private static func report(_ nesting: NestedLockAcquisition) {
            if let reporter = pthread_getspecific(reporterKey) {
                Unmanaged<Reporter>.fromOpaque(reporter).takeUnretainedValue().report(nesting)
                return
            }
            preconditionFailure(
                """
                the lock made at \(nesting.acquired) was taken while this thread holds the lock made at \
                \(nesting.held). Take one lock at a time: decide under the first, release it, then act.
                """)
        }

        /// Runs `body` with nestings on this thread reported to `reporter` instead of trapping.
        package static func reporting<Result>(
            to reporter: @escaping (NestedLockAcquisition) -> Void, _ body: () throws -> Result
        )
            rethrows -> Result
        {
            let box = Unmanaged.passRetained(Reporter(report: reporter))
            let previous = pthread_getspecific(reporterKey)
            pthread_setspecific(reporterKey, box.toOpaque())
            defer {
                pthread_setspecific(reporterKey, previous)
                box.release()
            }
            return try body()
        }

        private final class Reporter {
            package let report: (NestedLockAcquisition) -> Void
            package init(report: @escaping (NestedLockAcquisition) -> Void) { self.report = report }
        }
    }
#endif

/// A lock taken while the same thread held another: where each was made, as `file:line`.
package struct NestedLockAcquisition: Hashable, Sendable, CustomStringConvertible {
    /// Where the lock the thread already held was made.
    package let held: String
    /// Where the lock it then took was made.
    package let acquired: String

    package var description: String { "\(acquired) taken under \(held)" }
}

extension NestedLockAcquisition {
    /// Runs `body` on the calling thread and returns every nested lock acquisition it made,
    /// reported instead of trapping. Other threads keep trapping. Always empty in release
    /// builds, which do not check.
    package static func recorded(during body: () throws -> Void) rethrows -> [NestedLockAcquisition] {
        #if DEBUG
            var found: [NestedLockAcquisition] = []
            try LockNesting.reporting(to: { found.append($0) }, body)
            return found
        #else
            try body()
            return []
        #endif
    }
}

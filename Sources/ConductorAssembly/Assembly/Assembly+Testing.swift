extension Assembly {
    /// An assembly that calls `onWait` each time a resolver starts waiting for a creation in
    /// flight (the first requester included), so a test can hold a factory until every racing
    /// resolver has joined it — no sleeping, no polling.
    package convenience init(onWait: @escaping @Sendable () -> Void) {
        self.init(root: ServiceTable(probe: ServiceTableProbe(resolverWaits: onWait)))
    }
}

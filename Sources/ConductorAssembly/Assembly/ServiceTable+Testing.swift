/// What a test learns from a ``ServiceTable`` (and the override scopes made from it): each
/// time a resolver starts waiting for a creation in flight, the first requester included. A
/// test holds a factory until every racing resolver has joined it — no sleeping, no polling.
/// Only ``Assembly/init(onWait:)`` (Assembly+Testing.swift) makes a table with one.
struct ServiceTableProbe: Sendable {
    /// Called outside the table's lock, on the waiting resolver's task.
    let resolverWaits: @Sendable () -> Void
}

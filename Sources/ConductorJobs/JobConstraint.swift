/// A condition jobs can require before they are claimed, such as "the network is reachable".
///
/// ```swift
/// queue.register(constraint: JobConstraint(name: "network") { reachability.isReachable })
/// try await queue.enqueue(Upload.self, file, options: JobOptions(constraints: ["network"]))
/// reachability.onChange { queue.constraintsChanged() }   // re-check, and claim what is now allowed
/// ```
///
/// The queue calls the condition (outside any lock, so it may read whatever it likes, but it
/// must not block) whenever it looks for jobs to claim; ``JobQueue/constraintsChanged()`` makes
/// it look at once. A job naming a constraint nobody registered stays pending.
public struct JobConstraint: Sendable {
    /// The name jobs use in ``JobOptions/constraints``.
    public let name: String
    /// Whether the constraint holds now.
    public let isSatisfied: @Sendable () -> Bool

    /// A constraint named `name` that holds whenever `isSatisfied` returns `true`.
    public init(name: String, isSatisfied: @escaping @Sendable () -> Bool) {
        self.name = name
        self.isSatisfied = isSatisfied
    }
}

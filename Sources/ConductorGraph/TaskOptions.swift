/// How one task runs: its priority, time limit, retries, failure policy and what it does when
/// a dependency fails. Every way of adding a task takes one: ``TaskGraph/add(_:dependsOn:options:_:)``,
/// ``TaskGraph/addOnMainActor(_:dependsOn:options:_:)``, ``GraphRun/add(_:dependsOn:options:_:)``,
/// a ``Step`` of a ``Schedule``, and a start-up task (`StartupTask.options`).
///
/// ```swift
/// let patient = TaskOptions(timeout: .seconds(2), retry: .attempts(3))
/// graph.add("sku", dependsOn: ["basicInfo"], options: patient) { context in
///     try await api.sku(for: context.value(of: basicInfo).productID)
/// }
/// graph.add("recommendations", options: TaskOptions(priority: .low, failure: .optional)) { _ in
///     try await api.recommendations()
/// }
/// ```
///
/// A task's dependencies are not an option: they are the one setting whose default differs by
/// product, so each `add` takes them beside the options, as ``TaskDependencies``. A graph task
/// is ``TaskDependencies/independent`` unless it names dependencies; a start-up task runs
/// ``TaskDependencies/inOrderOfAddition``.
///
/// Nothing is checked when the value is made: a negative timeout or backoff, or a retry policy
/// of fewer than 1 attempt or a multiplier below 1, is reported, naming the task, when the
/// graph is validated (``GraphError``) or the start-up task is added (`LaunchError`).
public struct TaskOptions: Hashable, Sendable {
    /// Orders ready tasks when a concurrency limit holds them back, and is the base priority
    /// the operation runs at (`Task.basePriority`), whichever worker runs it.
    public var priority: TaskPriority
    /// The longest an attempt may take; it is abandoned at once when it expires and counts as
    /// a failed attempt. `nil`: no time limit. Zero is allowed (every attempt times out at once).
    public var timeout: Duration?
    /// How often to try again after a failure, and how long to wait in between.
    public var retry: RetryPolicy
    /// Whether the task's failure ends the run (``FailurePolicy/required``) or is recorded and
    /// the run goes on (``FailurePolicy/optional``).
    public var failure: FailurePolicy
    /// Skip the task, or run it anyway, when a dependency it requires did not succeed.
    public var whenDependencyFails: DependencyFailureBehavior
    /// Shared limits the task holds a place in while it runs, across every run that names
    /// them (``TaskLimit``); empty for none. The order does not matter: places are taken in
    /// the order the limits were made.
    public var limits: [TaskLimit]

    /// Options with the given settings; the defaults are a required task of medium priority,
    /// tried once, with no time limit, skipped if a dependency fails.
    public init(
        priority: TaskPriority = .medium,
        timeout: Duration? = nil,
        retry: RetryPolicy = .never,
        failure: FailurePolicy = .required,
        whenDependencyFails: DependencyFailureBehavior = .skip,
        limits: [TaskLimit] = []
    ) {
        self.priority = priority
        self.timeout = timeout
        self.retry = retry
        self.failure = failure
        self.whenDependencyFails = whenDependencyFails
        self.limits = limits
    }

    /// By `priority.rawValue`: `TaskPriority` is `Equatable` but not `Hashable`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(priority.rawValue)
        hasher.combine(timeout)
        hasher.combine(retry)
        hasher.combine(failure)
        hasher.combine(whenDependencyFails)
        hasher.combine(limits)
    }

    /// What validation reports about the options, naming the task that holds them; see
    /// ``invalidSetting(timeout:retry:of:)``. `package`: a launcher checks a start-up task's
    /// options with it.
    package func invalidSetting(of task: String) -> GraphError? {
        Self.invalidSetting(timeout: timeout, retry: retry, of: task)
    }

    /// A negative duration first (named as the API spells it), then a retry policy of fewer
    /// than 1 attempt or a multiplier below 1. A zero timeout is allowed (the attempt times out
    /// at once, like a harmonizer's). Nothing is clamped: a count of zero would end the task
    /// without running it, which is never what was meant. Static, so a ``TaskSpec``, which
    /// keeps the settings in a layout of its own, checks them here too.
    static func invalidSetting(timeout: Duration?, retry: RetryPolicy, of task: String) -> GraphError? {
        if let timeout, timeout < .zero { return .negativeDuration("timeout", timeout, task: task) }
        if let (parameter, value) = retry.negativeBackoff { return .negativeDuration(parameter, value, task: task) }
        return retry.invalidCount(task: task)
    }

    /// Whether ``invalidSetting(timeout:retry:of:)`` has something to report, without building
    /// the error.
    static func hasInvalidSetting(timeout: Duration?, retry: RetryPolicy) -> Bool {
        if let timeout, timeout < .zero { return true }
        return retry.negativeBackoff != nil || retry.hasInvalidCount
    }
}

/// What a task waits for before it starts.
///
/// ```swift
/// graph.add("sku", dependsOn: ["basicInfo"]) { _ in try await api.sku() }  // these tasks
/// graph.add("stock", dependsOn: .on(regions)) { _ in }                      // a list you hold
/// graph.add("comments") { _ in try await api.comments() }                   // .independent, the default
///
/// try launcher.add(ClosureStartupTask("config") { try await loadConfig() })  // .inOrderOfAddition, the default
/// try launcher.add(ClosureStartupTask("sync", dependsOn: .independent) { try await sync() })
/// ```
///
/// Each product has the default its use calls for: a graph task is ``independent`` (a graph
/// is written for concurrency), a start-up task runs ``inOrderOfAddition`` (a launcher is
/// sequential unless told otherwise, like the hand-written start-up code it replaces).
public struct TaskDependencies: Hashable, Sendable, ExpressibleByArrayLiteral {
    private enum Kind: Hashable, Sendable {
        case names([String])
        case inOrderOfAddition
    }

    private let kind: Kind

    /// No dependencies: the task starts at once. The default of every graph `add` and of a
    /// ``Step``.
    public static let independent = TaskDependencies(kind: .names([]))

    /// A start-up task's default: it starts once every task added before it with this same
    /// setting has ended, whatever its outcome — in effect, after the previous such task, as a
    /// hand-written start-up sequence would. Tasks added with named dependencies, or
    /// ``independent``, are not part of that sequence: a task added after one of them does not
    /// wait for it. Only a launcher has an order of addition; a graph rejects it
    /// (``GraphError/Code/invalidConfiguration``, naming the task).
    public static let inOrderOfAddition = TaskDependencies(kind: .inOrderOfAddition)

    /// The task starts once every named task (or milestone, or readiness set) has succeeded
    /// (or, for a milestone or readiness set, been reached). An empty list is ``independent``.
    public static func on(_ names: [String]) -> TaskDependencies { TaskDependencies(kind: .names(names)) }

    /// ``on(_:)`` the listed names.
    public init(arrayLiteral names: String...) { kind = .names(names) }

    private init(kind: Kind) { self.kind = kind }

    /// The named dependencies; empty for ``independent`` and ``inOrderOfAddition``.
    package var names: [String] {
        if case .names(let names) = kind { return names }
        return []
    }

    /// Whether this is ``inOrderOfAddition``.
    package var isInOrderOfAddition: Bool { kind == .inOrderOfAddition }
}

extension TaskDependencies: CustomStringConvertible {
    public var description: String {
        switch kind {
        case .inOrderOfAddition: "in order of addition"
        case .names([]): "independent"
        case .names(let names): "on \(names)"
        }
    }
}

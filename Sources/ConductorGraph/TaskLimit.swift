import Synchronization

/// A limit that tasks name, shared by every run that uses it: at most ``capacity`` of those
/// tasks run at once, highest priority first (``TaskOptions/priority``), first come first within
/// a priority. Like one `OperationQueue`'s `maxConcurrentOperationCount` across queues, or
/// taskflow's `Semaphore`.
///
/// ```swift
/// let database = TaskLimit(1, name: "database")
/// let network = TaskLimit(4, name: "network")
/// graph.add("migrate", options: TaskOptions(limits: [database])) { _ in try await loadConfig() }
/// graph.add("sync", options: TaskOptions(limits: [database, network])) { _ in try await sync() }
/// // However many runs of such graphs go at once, no two of those bodies touch the database together.
/// ```
///
/// - A task that names limits starts only once it holds a place in each, and keeps them for
///   its whole life — every attempt and the backoffs between them — giving each back once,
///   when it ends. A body its timeout, a removal or a stop abandoned keeps its places until it
///   actually returns: a body that ignores cancellation stays inside the critical section.
/// - While it waits for a place a task holds no worker and none of its run's
///   `concurrencyLimit`, and no timeout runs (a timeout measures an attempt's body).
/// - Places are taken one limit at a time in the order the limits were made, so two tasks
///   naming the same limits in opposite orders cannot deadlock; a task waiting for its second
///   limit holds its first.
/// - Removing a waiting task, or cancelling its run, ends it cancelled and gives back what it
///   holds. A paused run (``GraphRun/pause()``) gives back the places of tasks it has not
///   started and withdraws its requests; ``GraphRun/resume()`` makes them again, at the back of
///   each queue.
///
/// A capacity below 1 is not clamped: a graph with a task that names such a limit fails
/// validation (``GraphError/Code-swift.struct/invalidConfiguration``, naming the task and the
/// limit). Equal only to itself.
public final class TaskLimit: Sendable, Hashable, CustomStringConvertible {
    /// How many of the tasks that name this limit may run at once.
    public let capacity: Int
    /// A name for messages and descriptions; `nil` for none.
    public let name: String?
    /// The order limits were made in: a task takes its places in this order.
    let order: UInt64
    /// Read by the test hooks (TaskLimit+Testing.swift).
    let state: Lock<TaskLimitStateMachine<RequestID, Grant>>

    private static let made = Atomic<UInt64>(0)

    /// A limit of `capacity` places.
    public init(_ capacity: Int, name: String? = nil) {
        self.capacity = capacity
        self.name = name
        order = Self.made.add(1, ordering: .relaxed).newValue
        state = Lock(TaskLimitStateMachine(capacity: capacity))
    }

    public static func == (lhs: TaskLimit, rhs: TaskLimit) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        if let name { return "TaskLimit '\(name)' (capacity \(capacity))" }
        return "TaskLimit (capacity \(capacity))"
    }

    /// How messages name it.
    var quotedName: String { name.map { "'\($0)'" } ?? "(unnamed)" }

    // MARK: - Requests from runs

    /// The limits' part of a run's transition: requests withdrawn first, then places given
    /// back, then requests made, each on its limit's own lock. Called once the run's lock is
    /// released; grants this sets off are handed over from here.
    static func perform(_ lists: GraphEffects.Lists, for storage: GraphRunStorage) {
        for request in lists.cancelPermitRequests { request.limit.cancel(for: storage, ticket: request.ticket) }
        for limit in lists.permitReleases { limit.release() }
        for request in lists.permitRequests {
            request.limit.request(for: storage, node: request.node, ticket: request.ticket, rank: request.rank)
        }
    }

    /// A request, named by its run and a ticket the run numbered.
    struct RequestID: Hashable, Sendable {
        let run: ObjectIdentifier
        let ticket: UInt64
    }

    /// A place granted to a node of a run: the run's storage is held strongly while the request
    /// waits, and let go once the grant has been handed over.
    struct Grant: Sendable {
        let storage: GraphRunStorage
        let node: Int32
        let ticket: UInt64
    }

    /// Asks for a place for `node` of the run `storage`; a place granted at once is handed over
    /// before this returns.
    func request(for storage: GraphRunStorage, node: Int32, ticket: UInt64, rank: UInt8) {
        let request = TaskLimitStateMachine<RequestID, Grant>.Request(
            id: RequestID(run: ObjectIdentifier(storage), ticket: ticket), rank: rank,
            payload: Grant(storage: storage, node: node, ticket: ticket))
        guard let granted = state.withLock({ $0.acquire(request) }) else { return }
        Self.deliver([(self, granted)])
    }

    /// Withdraws a request. A request already granted needs nothing: its grant reaches a run
    /// that no longer wants it, which gives it back.
    func cancel(for storage: GraphRunStorage, ticket: UInt64) {
        _ = state.withLock { $0.cancel(RequestID(run: ObjectIdentifier(storage), ticket: ticket)) }
    }

    /// Gives `count` places back; the requests they go to are handed over.
    func release(_ count: Int = 1) {
        Self.deliver(releaseReturningGrants(count))
    }

    private func releaseReturningGrants(_ count: Int) -> [(TaskLimit, Grant)] {
        state.withLock { $0.release(count) }.map { (self, $0) }
    }

    /// Hands grants to their runs, one transition per run, and passes on the places those runs
    /// give back (a task that ended, or a paused run). Iterative: places given back go to the
    /// next requests in this same loop, never in a deeper call. No lock is held here.
    private static func deliver(_ grants: [(TaskLimit, Grant)]) {
        var work = grants
        while let first = work.first {
            let storage = first.1.storage
            var mine: [(limit: TaskLimit, grant: Grant)] = []
            work.removeAll { entry in
                guard entry.1.storage === storage else { return false }
                mine.append(entry)
                return true
            }
            for limit in admit(mine, to: storage) { work += limit.releaseReturningGrants(1) }
        }
    }

    /// Places granted to `storage`'s tasks, in one transition of that run; returns those it
    /// gives back at once.
    private static func admit(_ grants: [(limit: TaskLimit, grant: Grant)], to storage: GraphRunStorage) -> [TaskLimit]
    {
        let grants = grants.map { (limit: $0.limit, node: $0.grant.node, ticket: $0.grant.ticket) }
        var effects = GraphEffects()
        let unwanted = storage.transition { machine in
            let unwanted = machine.admissions.admit(
                grants, isRunning: machine.isRunning, table: &machine.table, readyQueue: &machine.readyQueue,
                effects: &effects)
            machine.wakeDriverIfNeeded(&effects)
            return unwanted
        }
        storage.apply(effects)
        return unwanted
    }
}

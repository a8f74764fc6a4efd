/// Everything about shared limits (``TaskLimit``) in one run, and whether the run is paused:
/// for each task that names limits, from the moment its dependencies have ended until it has
/// given every place back, which limits it names, how many it holds and its open request.
/// A part of ``GraphStateMachine``, under the run's lock; empty for a run whose tasks name no
/// limit and that is never paused, and then never touched.
///
/// A place is always in exactly one home: a limit's queue, a grant on its way to the run
/// (``admit(_:isRunning:table:readyQueue:effects:)``), or a record here. A grant that reaches a task that
/// no longer waits for it — ended, or its request withdrawn by a pause — is given back.
struct GraphAdmissions {
    /// A request for a place, made once the run's lock is released.
    struct Request {
        let limit: TaskLimit
        let node: Int32
        let ticket: UInt64
        let rank: UInt8
    }

    /// One limited task's places.
    struct Record {
        /// In the order of the limits' creation: places are taken in this order.
        let limits: [TaskLimit]
        let rank: UInt8
        /// Places held: those of `limits[..<held]`.
        var held = 0
        /// The request for `limits[held]` that waits for a grant, if any.
        var ticket: UInt64?
        /// Bodies in tasks of their own that have begun and not returned. A task that ends
        /// while one is out keeps its places (it lingers) until the last returns.
        var bodiesOut = 0
        var ended = false

        /// Waits neither for a place nor for a grant: the places a pause withdrew, or a task
        /// that became ready while the run was paused.
        var isWithdrawn: Bool { !ended && ticket == nil && held < limits.count }
    }

    private(set) var records: [Int32: Record] = [:]
    private var lastTicket: UInt64 = 0
    /// No task starts and no attempt begins (``GraphWorkers/startLimit`` is 0) until resumed.
    private(set) var isPaused = false
    /// Attempt loops waiting to begin their next attempt: for the run's resume, or for the
    /// lingering body of their own earlier attempt.
    private var retryWaiters: [WaiterSet<Void>.Waiter] = []

    private mutating func newTicket() -> UInt64 {
        lastTicket += 1
        return lastTicket
    }

    private mutating func request(_ node: Int32) -> Request {
        let ticket = newTicket()
        records[node]!.ticket = ticket
        let record = records[node]!
        return Request(limit: record.limits[record.held], node: node, ticket: ticket, rank: record.rank)
    }

    // MARK: - A task's places

    /// A task that names `limits` has had its dependencies end: the request for its first
    /// place, unless the run is paused (then it waits for the resume).
    mutating func begin(_ node: Int32, limits: [TaskLimit], rank: UInt8) -> Request? {
        records[node] = Record(limits: limits, rank: rank)
        return isPaused ? nil : request(node)
    }

    enum Admission {
        /// The grant is not wanted: give the place back.
        case giveBack
        /// Held; the task asks for its next place.
        case next(Request)
        /// The task holds all its places: it is ready.
        case admitted
    }

    /// A place granted for request `ticket` of `node`.
    mutating func grant(_ node: Int32, ticket: UInt64) -> Admission {
        guard var record = records[node], record.ticket == ticket, !record.ended, !isPaused else { return .giveBack }
        record.ticket = nil
        record.held += 1
        records[node] = record
        return record.held < record.limits.count ? .next(request(node)) : .admitted
    }

    /// `node` has ended: the request to withdraw, if one waits, and the places to give back —
    /// none while a body of it is still out (they go when it returns).
    mutating func end(_ node: Int32) -> (withdraw: Request?, giveBack: ArraySlice<TaskLimit>) {
        guard var record = records[node], !record.ended else { return (nil, []) }
        let withdraw = record.ticket.map {
            Request(limit: record.limits[record.held], node: node, ticket: $0, rank: record.rank)
        }
        record.ticket = nil
        guard record.bodiesOut == 0 else {
            record.ended = true
            records[node] = record
            return (withdraw, [])
        }
        records[node] = nil
        return (withdraw, record.limits[..<record.held])
    }

    /// A body of `node` in a task of its own begins.
    mutating func bodyBegins(_ node: Int32) {
        records[node]?.bodiesOut += 1
    }

    /// That body returned: the places of a task that ended meanwhile, now free, and whether
    /// no body of it is out any more.
    mutating func bodyReturned(_ node: Int32) -> (giveBack: ArraySlice<TaskLimit>, noneOut: Bool) {
        guard var record = records[node] else { return ([], true) }
        record.bodiesOut -= 1
        if record.ended, record.bodiesOut == 0 {
            records[node] = nil
            return (record.limits[..<record.held], true)
        }
        records[node] = record
        return ([], record.bodiesOut == 0)
    }

    /// Whether a body of `node` is still out.
    func hasBodyOut(_ node: Int32) -> Bool { (records[node]?.bodiesOut ?? 0) > 0 }

    // MARK: - Pausing

    /// Pauses: for each of `unstarted` (tasks not yet started), the request to withdraw and
    /// the places to give back.
    mutating func pause(unstarted: [Int32]) -> (withdraw: [Request], giveBack: [TaskLimit]) {
        isPaused = true
        var withdraw: [Request] = []
        var giveBack: [TaskLimit] = []
        for node in unstarted {
            guard var record = records[node], !record.ended else { continue }
            if let ticket = record.ticket {
                withdraw.append(
                    Request(limit: record.limits[record.held], node: node, ticket: ticket, rank: record.rank))
            }
            giveBack += record.limits[..<record.held]
            record.ticket = nil
            record.held = 0
            records[node] = record
        }
        return (withdraw, giveBack)
    }

    /// Resumes: the waiting attempt loops to wake, and the nodes whose places were withdrawn
    /// (or never asked for), to ask for again.
    mutating func resume() -> (waiters: [WaiterSet<Void>.Waiter], withdrawn: [Int32]) {
        isPaused = false
        return (takeRetryWaiters(), records.compactMap { $0.value.isWithdrawn ? $0.key : nil })
    }

    /// The request for the first place of a node ``resume()`` listed.
    mutating func requestAgain(_ node: Int32) -> Request { request(node) }

    /// The rank of a node with a record.
    func rank(of node: Int32) -> UInt8 { records[node]?.rank ?? 0 }

    /// Whether `node` holds a place or waits for one: a pause withdraws what it holds.
    func isAdmitting(_ node: Int32) -> Bool { records[node].map { !$0.ended } ?? false }

    // MARK: - Attempt loops waiting to begin

    mutating func parkRetry(_ waiter: WaiterSet<Void>.Waiter) { retryWaiters.append(waiter) }

    mutating func takeRetryWaiters() -> [WaiterSet<Void>.Waiter] {
        defer { retryWaiters = [] }
        return retryWaiters
    }

    /// The run stopped: nothing is paused any more.
    mutating func stopPausing() { isPaused = false }
}

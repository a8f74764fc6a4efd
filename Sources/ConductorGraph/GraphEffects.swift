/// What the storage must do after a transition of ``GraphStateMachine``, outside the lock.
/// Most completions leave nothing to do; `isEmpty` lets the storage see that with one load.
///
/// Plain flags and an optional waiter: the lists only a milestone, a removal or a stop fills
/// are boxed in ``Lists``, so making and dropping the effects of a completion retains and
/// releases nothing (an array, even an empty one, is retained and released with its holder).
struct GraphEffects {
    /// The lists of effects, boxed. Unchecked, and safe: a box is made and filled by one
    /// transition, under the run's lock, and only read once that transition has returned it
    /// (``GraphRunStorage/PendingResumptions`` hands it to the thread that performs it, after
    /// the lock is released); nothing writes it after it left the transition.
    final class Lists: @unchecked Sendable {
        var reachedMilestones: [(name: String, at: Duration)] = []
        /// The tasks of abandoned attempts' bodies, to cancel.
        var cancelBodies: [Task<Void, Never>] = []
        /// Tasks to resume: workers that waited for an attempt abandonment settled, and
        /// tasks that waited for a milestone now reached or missed.
        var resumeWaiters: [WaiterSet<Void>.Waiter] = []
        /// Workers a removal pinned, whose tasks to cancel, then unpin (``WorkerRegistry``).
        var cancelWorkers: [(task: WorkerTask, id: Int32)] = []
        /// Shared limits (``GraphAdmissions``): requests to withdraw, places to give back,
        /// requests to make — in that order, each on the limit's own lock.
        var cancelPermitRequests: [GraphAdmissions.Request] = []
        var permitReleases: [TaskLimit] = []
        var permitRequests: [GraphAdmissions.Request] = []
        /// The run's deadline timer to start (``GraphDeadlineTimer``).
        var timerStart: GraphDeadlines.TimerStart?

        var hasPermitWork: Bool {
            !cancelPermitRequests.isEmpty || !permitReleases.isEmpty || !permitRequests.isEmpty
        }
    }

    private(set) var isEmpty = true
    /// The parked driver, to resume: it has work.
    var resumeDriver: WaiterSet<Void>.Waiter? {
        didSet { isEmpty = false }
    }
    private(set) var lists: Lists?

    var reachedMilestones: [(name: String, at: Duration)] { lists?.reachedMilestones ?? [] }
    var cancelBodies: [Task<Void, Never>] { lists?.cancelBodies ?? [] }
    var resumeWaiters: [WaiterSet<Void>.Waiter] { lists?.resumeWaiters ?? [] }
    var cancelWorkers: [(task: WorkerTask, id: Int32)] { lists?.cancelWorkers ?? [] }
    var cancelPermitRequests: [GraphAdmissions.Request] { lists?.cancelPermitRequests ?? [] }
    var permitReleases: [TaskLimit] { lists?.permitReleases ?? [] }
    var permitRequests: [GraphAdmissions.Request] { lists?.permitRequests ?? [] }
    var timerStart: GraphDeadlines.TimerStart? { lists?.timerStart }

    private mutating func madeLists() -> Lists {
        isEmpty = false
        if let lists { return lists }
        let made = Lists()
        lists = made
        return made
    }

    mutating func reached(_ milestone: String, at time: Duration) {
        madeLists().reachedMilestones.append((milestone, time))
    }

    /// An attempt was abandoned: its body (if it started) is cancelled, and its worker (if
    /// it waits) resumed, in that order.
    mutating func abandoned(body: Task<Void, Never>?, worker: WaiterSet<Void>.Waiter?) {
        guard body != nil || worker != nil else { return }
        let lists = madeLists()
        if let body { lists.cancelBodies.append(body) }
        if let worker { lists.resumeWaiters.append(worker) }
    }

    /// A removal pinned worker `id`: its task is cancelled, then the worker unpinned.
    mutating func cancelWorker(_ task: WorkerTask, id: Int32) {
        madeLists().cancelWorkers.append((task, id))
    }

    mutating func resume(_ waiters: [WaiterSet<Void>.Waiter]) {
        guard !waiters.isEmpty else { return }
        madeLists().resumeWaiters.append(contentsOf: waiters)
    }

    mutating func requestPermit(_ request: GraphAdmissions.Request) {
        madeLists().permitRequests.append(request)
    }

    mutating func cancelPermitRequest(_ request: GraphAdmissions.Request?) {
        guard let request else { return }
        madeLists().cancelPermitRequests.append(request)
    }

    mutating func releasePermits<Limits: Collection<TaskLimit>>(_ limits: Limits) {
        guard !limits.isEmpty else { return }
        madeLists().permitReleases.append(contentsOf: limits)
    }

    mutating func startTimer(_ start: GraphDeadlines.TimerStart) {
        madeLists().timerStart = start
    }

    /// A task to cancel once the lock is released (a deadline timer no longer wanted).
    mutating func cancel(_ task: Task<Void, Never>?) {
        guard let task else { return }
        madeLists().cancelBodies.append(task)
    }
}

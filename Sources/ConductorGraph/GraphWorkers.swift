/// The workers of a run and the driver that starts them: how many tasks run, which workers are
/// alive, when a helper on a thread of its own starts or retires, and the parked driver.
///
/// Workers start inline — on the driver's thread, until their task first suspends — so a run
/// of short bodies is one worker on one core: handing tasks between cores costs a cache-line
/// transfer per task under the run's lock, more than a no-op body (see docs/ARCHITECTURE.md,
/// "Workers and cores"). An inline worker whose bodies have been long (``helperThreshold``,
/// twice in a row) while tasks wait gives its thread back, and the driver starts the waiting
/// task in a helper and the next one inline, so the run spreads over two cores only when the
/// bodies pay for the hand-over. A helper retires the same way once bodies have been short
/// ``helperRetiresAfter`` times in a row while another worker is alive.
struct GraphWorkers {
    /// How long a body must run, in nanoseconds, for a second core to pay. Handing tasks
    /// between cores costs a cache-line transfer or two under the run's lock per task: no-op
    /// bodies (a few tens of nanoseconds between the worker's clock reads) ran slower on two
    /// cores than on one, 1 µs bodies faster (Benchmarks/README.md, the scaling table). Half a
    /// microsecond lies between.
    static let helperThreshold: Int64 = 500

    /// How many short bodies in a row make a helper retire while another worker is alive:
    /// enough that bodies around the threshold do not start and end a helper task every few
    /// tasks.
    static let helperRetiresAfter = 64

    /// What a worker does once it has recorded a body's end.
    enum AfterBody {
        /// Takes the next ready task, if there is one.
        case takeNext
        /// Gives its thread back if tasks wait (``giveThreadBack()``), so the driver starts
        /// the next one in a helper; takes the next task otherwise.
        case giveThreadBackIfTasksWait
        /// A helper whose bodies got short again ends: the run goes back to the workers it
        /// had, and a parked driver starts an inline one if tasks wait. So does any worker
        /// whose task a removal cancelled (``WorkerRegistry``).
        case retire
    }

    /// A task handed to a worker: a trivial value, which an async worker copies without
    /// retains and without value witnesses. The first attempt of a task whose body runs in a
    /// task of its own is registered before the worker sees the assignment; the worker claims
    /// it with ``AttemptsInTasks/claim(_:number:)``.
    struct Assignment {
        var node: Int
        /// Unowned and unchecked, which is safe: the spec is held by the definitions, which
        /// only ever grow, for as long as the storage that owns this machine lives — and only
        /// that storage's workers, running methods of it, hold assignments.
        unowned(unsafe) var spec: TaskSpec
    }

    /// What a worker does once it has recorded a body's end: its next task, or it ends. Its
    /// entry in the ``WorkerRegistry`` is closed in that same transition — by the id its last
    /// node keeps, so ending costs no search and no second lock — and, while a removal has it
    /// pinned, it waits for the unpin before its task may end.
    enum WorkerNext {
        case run(Assignment)
        case end
        case endAfterUnpin(Int32)
    }

    enum DriverAction {
        /// Start a worker for the assignment; `inline` workers run on the driver's thread
        /// until they first suspend, so no-op work never pays for a thread hop.
        case spawn(Assignment, inline: Bool)
        case cancelAll
        case wait
        case finish
    }

    let concurrencyLimit: Int
    /// How many helpers may run on threads of their own besides the driver's: one per core
    /// but the driver's.
    let parallelWorkers: Int
    /// Tasks running: handed to a worker and not yet ended, or backing off between attempts.
    var running = 0
    private(set) var liveWorkers = 0
    /// Helpers alive: workers started on threads of their own (`spawn(_:inline: false)`).
    private(set) var liveHelpers = 0
    /// A worker gave its thread back because the bodies are long enough to share: the driver
    /// starts the next worker on a thread of its own.
    private(set) var helperWanted = false
    /// How many bodies in a row ran at least ``helperThreshold``, and how many in a row did not.
    private var longBodies = 0
    private var shortBodies = 0
    /// The driver while it is parked.
    private var parkedDriver: WaiterSet<Void>.Waiter?
    /// The run stopped: the driver cancels its task group next.
    var driverMustCancelAll = false
    /// Each worker's task, by id, for a removal to cancel (GraphWorkers+Registry.swift).
    var registry = WorkerRegistry()

    /// `concurrencyLimit` has been checked by whoever started the run (`TaskGraph.check`):
    /// below 1 it would start nothing, so it is a bug here, not a value to round up.
    init(concurrencyLimit: Int, parallelWorkers: Int) {
        precondition(concurrencyLimit >= 1, "concurrencyLimit \(concurrencyLimit) was not validated")
        self.concurrencyLimit = concurrencyLimit
        self.startLimit = concurrencyLimit
        self.parallelWorkers = max(0, parallelWorkers)
    }

    /// How many tasks may run for another to start: `concurrencyLimit`, or 0 while the run is
    /// paused — so a pause costs the hot path nothing: ``hasSlot`` refuses every start.
    private(set) var startLimit: Int

    /// Whether another task may start now.
    var hasSlot: Bool { running < startLimit }

    /// No task starts until ``resumeStarting()``.
    mutating func pauseStarting() { startLimit = 0 }

    mutating func resumeStarting() { startLimit = concurrencyLimit }

    /// The driver starts a worker for a task it took: on a thread of its own if a worker gave
    /// its thread back for it and a helper may start, inline otherwise. Returns `inline`.
    mutating func startWorker() -> Bool {
        liveWorkers += 1
        guard helperWanted, liveHelpers < parallelWorkers else { return true }
        helperWanted = false
        liveHelpers += 1
        return false
    }

    /// The driver found no task to start: a wish for a helper lapses with the task it was for.
    mutating func noTaskToStart() { helperWanted = false }

    /// A worker recorded the end of a body that ran from `startedAt` (`never` if it did not)
    /// to `now`.
    @inline(__always)
    mutating func bodyEnded(startedAt: Int64, now: Int64, helper: Bool) -> AfterBody {
        if startedAt != GraphNodeTable.Node.never, now &- startedAt >= Self.helperThreshold {
            longBodies += 1
            shortBodies = 0
        } else {
            longBodies = 0
            shortBodies += 1
        }
        if !helper, longBodies >= 2, liveHelpers < parallelWorkers, running < concurrencyLimit {
            return .giveThreadBackIfTasksWait
        }
        if helper, shortBodies >= Self.helperRetiresAfter, liveWorkers > 1 {
            shortBodies = 0
            return .retire
        }
        return .takeNext
    }

    /// An inline worker gives its thread back for a waiting task: the driver starts that task
    /// in a helper.
    mutating func giveThreadBack() {
        helperWanted = true
        longBodies = 0
    }

    /// A worker ends: it has no next task.
    mutating func workerEnded(helper: Bool) {
        liveWorkers -= 1
        if helper { liveHelpers -= 1 }
    }

    // MARK: - The driver

    /// Parks the driver, or lets it go on at once if `hasWork`.
    mutating func parkDriver(_ driver: WaiterSet<Void>.Waiter, hasWork: Bool) -> SuspensionDecision<Void, Void> {
        guard !hasWork else { return .resume((), ()) }
        parkedDriver = driver
        return .wait(())
    }

    /// The parked driver, to resume, if there is one: it is no longer parked.
    mutating func unparkDriver() -> WaiterSet<Void>.Waiter? {
        defer { parkedDriver = nil }
        return parkedDriver
    }

    var driverIsParked: Bool { parkedDriver != nil }
}

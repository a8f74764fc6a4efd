/// The run's workers by id, each with its task: so removing a task whose body runs on a worker
/// can cancel that worker's task, which is the only task such a body runs in (or under: a child
/// at another priority, a hop to the main actor).
///
/// A worker gets an id when the driver hands it its first task (``open()``, the id is written
/// in the running node, see ``GraphNodeTable/Node/remaining``, and in each node it runs next),
/// registers its task before it calls a body (``register(_:task:)``), and its entry is closed
/// by the transition that records its last body's end and gives it no next task
/// (``close(_:)``, from the id that node keeps). Nothing here is touched per task.
///
/// **Lifetime.** An `UnsafeCurrentTask` does not keep its task alive, so the registry never
/// lets one be used after its worker could have ended. A removal *pins* the worker under the
/// run's lock (``pin(_:)``) and gets its task; it calls `cancel()` after the lock is released
/// (cancellation handlers are user code), then *unpins* it under the lock again
/// (``unpin(_:)``). A worker closing its entry while it is pinned does not end: it waits
/// (``awaitUnpinned(_:_:)``) until the last unpin resumes it. So from every pin to its unpin
/// the worker's task is suspended or running, never ended, and `cancel()` — called only in
/// between — always finds it alive. A pin is only ever taken on an entry that is registered
/// and not closing: a worker closes only after its last task ended, and only a task that is
/// running (so has not ended) leads a removal to its worker.
struct WorkerRegistry {
    struct Entry {
        /// The worker's task, once it registered.
        var task: WorkerTask?
        /// Removals between their pin and their unpin.
        var pins: Int32 = 0
        /// The worker wants to end; it waits for the last unpin when `waiter` is set.
        var isClosing = false
        var waiter: WaiterSet<Void>.Waiter?
        var isOpen = true
        /// Started on a thread of its own (``GraphWorkers/startWorker()``).
        var isHelper = false
    }

    private var entries: [Entry] = []
    /// Ids of closed entries, for the next workers.
    private var free: [Int32] = []

    /// An id for a worker about to start.
    mutating func open(isHelper: Bool = false) -> Int32 {
        if let id = free.popLast() {
            entries[Int(id)] = Entry(isHelper: isHelper)
            return id
        }
        entries.append(Entry(isHelper: isHelper))
        return Int32(entries.count - 1)
    }

    /// Worker `id` runs in `task`, from now until it closes its entry.
    mutating func register(_ id: Int32, task: WorkerTask?) {
        guard entries.indices.contains(Int(id)) else { return }
        entries[Int(id)].task = task
    }

    /// Pins worker `id` and returns its task, to cancel once the lock is released and then
    /// unpin; `nil` if it has not registered yet (its first body has not begun: the worker
    /// checks for the removal when it registers) or for an id no worker has.
    mutating func pin(_ id: Int32) -> WorkerTask? {
        guard entries.indices.contains(Int(id)), entries[Int(id)].isOpen, !entries[Int(id)].isClosing,
            let task = entries[Int(id)].task
        else { return nil }
        entries[Int(id)].pins += 1
        return task
    }

    /// Ends a pin; returns the worker to resume if this was the last pin and it waits to end.
    mutating func unpin(_ id: Int32) -> WaiterSet<Void>.Waiter? {
        entries[Int(id)].pins -= 1
        guard entries[Int(id)].pins == 0, entries[Int(id)].isClosing, let waiter = entries[Int(id)].waiter else {
            return nil
        }
        free(id)
        return waiter
    }

    /// Worker `id` has nothing left to do. Returns whether it must wait for an unpin
    /// (``awaitUnpinned(_:_:)``) before its task may end.
    mutating func close(_ id: Int32) -> Bool {
        guard entries.indices.contains(Int(id)) else { return false }
        guard entries[Int(id)].pins == 0 else {
            entries[Int(id)].isClosing = true
            return true
        }
        free(id)
        return false
    }

    /// Worker `id`, closing while pinned, waits for its last unpin — or goes at once if that
    /// came meanwhile.
    mutating func awaitUnpinned(_ id: Int32, _ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard entries[Int(id)].pins > 0 else {
            free(id)
            return .resume((), ())
        }
        entries[Int(id)].waiter = waiter
        return .wait(())
    }

    private mutating func free(_ id: Int32) {
        entries[Int(id)] = Entry(task: nil, isOpen: false)
        free.append(id)
    }

    /// Whether worker `id` was started on a thread of its own.
    func isHelper(_ id: Int32) -> Bool { entries.indices.contains(Int(id)) && entries[Int(id)].isHelper }

    /// Workers that have an id and have not closed (a test hook's answer).
    var openCount: Int { entries.count - free.count }
}

/// A worker's task, kept in the registry and handed from the lock to the removal that cancels
/// it.
///
/// Unchecked, and safe: `UnsafeCurrentTask` is not `Sendable` because it must not be used once
/// its task has ended. It is made by the worker itself, inside `withUnsafeCurrentTask`, and
/// kept under the run's lock until the worker closes its entry; the one use of it is a
/// `cancel()` between a pin and its unpin, while the task is alive (see ``WorkerRegistry``),
/// and cancelling a task from another thread is what `UnsafeCurrentTask.cancel()` is for.
struct WorkerTask: @unchecked Sendable {
    private let task: UnsafeCurrentTask

    init(_ task: UnsafeCurrentTask) { self.task = task }

    func cancel() { task.cancel() }
}

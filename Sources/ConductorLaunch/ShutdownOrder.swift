/// The order of a launcher's shutdown, as a pure value: which undos may start now, given
/// which have ended. No locks, no tasks, no user code; `Launcher.shutdown()` drives it and
/// runs the undos it names.
///
/// A task is undone only after every succeeded task that reached it through its
/// prerequisites (declared dependencies, readiness sets, the chain of tasks added in order)
/// has been undone, whatever that undo's outcome; independent ones are undone together.
/// Among the undos that may start at once, the one whose task completed last comes first.
struct ShutdownOrder {
    enum Action: Equatable {
        /// Start undoing these tasks.
        case undo([String])
        /// Nothing to start until a running undo ends.
        case wait
        /// Every undo has ended.
        case finished
    }

    /// For each task not yet started, the succeeded tasks that depend on it and have not yet
    /// been undone.
    private var blockers: [String: Set<String>] = [:]
    /// The tasks not yet started, in the reverse of the order they completed.
    private var waiting: [String]
    private var running = 0

    /// - Parameters:
    ///   - succeeded: The tasks that succeeded, in the order they completed.
    ///   - prerequisites: What each task and readiness set of the launch waited for.
    init(succeeded: [String], prerequisites: [String: [String]]) {
        waiting = succeeded.reversed()
        let undoable = Set(succeeded)
        for task in succeeded { blockers[task] = [] }
        for dependent in succeeded {
            // Everything the dependent reached, through tasks that failed or were skipped too.
            var seen: Set<String> = []
            var stack = prerequisites[dependent] ?? []
            while let name = stack.popLast() {
                guard seen.insert(name).inserted else { continue }
                if undoable.contains(name), name != dependent { blockers[name, default: []].insert(dependent) }
                stack.append(contentsOf: prerequisites[name] ?? [])
            }
        }
    }

    /// The first undos: those no other succeeded task depends on.
    mutating func start() -> Action {
        next()
    }

    /// `task`'s undo has ended, whatever its outcome.
    mutating func undone(_ task: String) -> Action {
        running -= 1
        for name in waiting { blockers[name]?.remove(task) }
        return next()
    }

    private mutating func next() -> Action {
        var ready = waiting.filter { blockers[$0]?.isEmpty ?? true }
        // Prerequisites come from a graph the launch validated as acyclic; should that ever
        // not hold, undoing the rest beats waiting forever.
        if ready.isEmpty, running == 0 { ready = waiting }
        guard !ready.isEmpty else { return running == 0 ? .finished : .wait }
        let started = Set(ready)
        waiting.removeAll { started.contains($0) }
        running += ready.count
        return .undo(ready)
    }
}

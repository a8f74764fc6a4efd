/// The pure bookkeeping of a launcher: which names exist, what was added before the launch,
/// and how tasks added ``TaskDependencies/inOrderOfAddition`` are chained in that order. No locks, no
/// tasks, no user code (tasks arrive as ``TaskSnapshot``s): the launcher calls it under its
/// lock and hands the definitions to the graph.
struct LaunchPlan {
    /// A start-up task's properties, read once, before the launcher takes its lock: they are
    /// user code, which may be slow, take locks of its own or call back into the launcher.
    struct TaskSnapshot: Sendable {
        let task: any StartupTask
        let name: String
        let dependencies: TaskDependencies
        let runsOnMainActor: Bool
        let options: TaskOptions

        init(_ task: some StartupTask) {
            self.task = task
            self.name = task.name
            self.dependencies = task.dependencies
            self.runsOnMainActor = task.runsOnMainActor
            self.options = task.options
        }
    }

    enum Entry {
        case task(TaskSnapshot)
        case readiness(String, after: [String])

        var name: String {
            switch self {
            case .task(let task): task.name
            case .readiness(let name, _): name
            }
        }
    }

    enum Kind { case task, readiness }

    /// What was added before the launch, in order; compiled when the launch starts.
    private(set) var entries: [Entry] = []
    /// Every name that may be depended on now.
    private(set) var kinds: [String: Kind] = [:]
    /// The node the next chained task runs after: the hidden marker that ends once the last
    /// chained task and everything chained before it have ended. A marker (rather than the
    /// task itself) keeps the order when a pending task in the middle is removed.
    private var chainTail: String?
    /// The tasks handed to the graph, in order: what `removeAll` removes during the launch.
    private(set) var compiledTasks: [String] = []
    private var markers = 0
    /// What each compiled task and readiness set waited for, as names of tasks and readiness
    /// sets: its declared dependencies, or the chained task added before it. The shutdown
    /// undoes a task only after every task that reaches it through these has been undone.
    private(set) var prerequisites: [String: [String]] = [:]
    /// The compiled tasks by name: the shutdown calls their ``StartupTask/undo()``.
    private(set) var compiledByName: [String: any StartupTask] = [:]
    /// The last task compiled ``TaskDependencies/inOrderOfAddition``: the next such task's
    /// prerequisite.
    private var lastChainedTask: String?

    /// Checks a new entry's name, dependencies and options against what has been added.
    mutating func admit(_ entry: Entry) throws(LaunchError) {
        let name = entry.name
        if name.isEmpty { throw .emptyName() }
        if kinds[name] != nil { throw .duplicateName(name) }
        let dependencies: [String]
        switch entry {
        case .task(let task): dependencies = task.dependencies.names
        case .readiness(_, let after): dependencies = after
        }
        // Naming itself is a cycle, not a missing task: adding it first is impossible.
        if dependencies.contains(name) { throw .dependsOnItself(name) }
        for dependency in dependencies where kinds[dependency] == nil {
            throw .unknownDependency(dependency, of: name)
        }
        // Adding is the first call that throws for a task: it is rejected here rather than
        // failing at run time, when it would time out or back off for a negative time, or end
        // without an attempt.
        if case .task(let task) = entry, let invalid = task.options.invalidSetting(of: name) {
            throw LaunchError.from(invalid)
        }
        switch entry {
        case .task: kinds[name] = .task
        case .readiness: kinds[name] = .readiness
        }
    }

    /// Before the launch: remembers an admitted entry.
    mutating func keep(_ entry: Entry) {
        entries.append(entry)
    }

    /// Before the launch: forgets a task, freeing its name. Returns whether it was there.
    mutating func forget(_ name: String) -> Bool {
        guard kinds[name] == .task, let index = entries.firstIndex(where: { $0.name == name }) else { return false }
        entries.remove(at: index)
        kinds[name] = nil
        return true
    }

    /// Before the launch: forgets every task (readiness sets stay, though they may now name
    /// tasks that are gone, which the launch's validation reports).
    mutating func forgetAllTasks() {
        entries.removeAll { entry in
            guard case .task(let task) = entry else { return false }
            kinds[task.name] = nil
            return true
        }
    }

    /// Whether `name` is a readiness set.
    func isReadiness(_ name: String) -> Bool { kinds[name] == .readiness }

    /// Whether `name` is a task.
    func isTask(_ name: String) -> Bool { kinds[name] == .task }

    /// Compiles the entries kept before the launch, emptying them.
    mutating func compileEntries() -> [NodeDefinition] {
        let kept = entries
        entries = []
        var definitions: [NodeDefinition] = []
        definitions.reserveCapacity(kept.count * 2)
        for entry in kept { compile(entry, into: &definitions) }
        return definitions
    }

    /// The graph nodes for one entry: a task (plus its chain marker if it was added
    /// ``TaskDependencies/inOrderOfAddition``), or a readiness milestone.
    mutating func compile(_ entry: Entry, into definitions: inout [NodeDefinition]) {
        switch entry {
        case .readiness(let name, let after):
            prerequisites[name] = after
            definitions.append(
                NodeDefinition(
                    id: name, requires: [], after: after, kind: .marker(milestone: name, startsStage: nil),
                    stage: nil, isHidden: false)
            )
        case .task(let task):
            compiledTasks.append(task.name)
            compiledByName[task.name] = task.task
            let spec = Self.spec(for: task)
            guard task.dependencies.isInOrderOfAddition else {
                let names = task.dependencies.names
                prerequisites[task.name] = names
                definitions.append(
                    NodeDefinition(
                        id: task.name, requires: names, after: [], kind: .task(spec), stage: nil, isHidden: false)
                )
                return
            }
            prerequisites[task.name] = lastChainedTask.map { [$0] } ?? []
            lastChainedTask = task.name
            let previous = chainTail.map { [$0] } ?? []
            definitions.append(
                NodeDefinition(
                    id: task.name, requires: [], after: previous, kind: .task(spec), stage: nil, isHidden: false)
            )
            let marker = "\u{1}launch chain \(markers)"
            markers += 1
            definitions.append(
                NodeDefinition(
                    id: marker, requires: [], after: [task.name] + previous,
                    kind: .marker(milestone: nil, startsStage: nil), stage: nil, isHidden: true)
            )
            chainTail = marker
        }
    }

    /// How the graph runs a start-up task. Detached, so that removing a running task or
    /// stopping the launch abandons it at once instead of waiting for it to notice.
    static func spec(for snapshot: TaskSnapshot) -> TaskSpec {
        let task = snapshot.task
        let operation: TaskSpec.Operation =
            snapshot.runsOnMainActor
            ? .mainActor { _ in try await task.run() }
            : .global { _ in try await task.run() }
        return TaskSpec.make(operation: operation, options: snapshot.options, runsInOwnTask: true)
    }
}

/// The node table of a run: each node's changing state, and what only some nodes need.
///
/// Laid out for the hot path (a no-op task is queued, started and ended thousands of times a
/// millisecond): each node's changing state is a small trivial struct (`Node`, times as
/// nanosecond offsets), so the array of them is copied and freed without a value witness;
/// what only some nodes need lives in side tables — the outcome of a task that failed, timed
/// out or was skipped, results other than `Void`, the tasks a removal ended.
struct GraphNodeTable {
    /// Where a node is in its life. The last five are its end, and say how it ended (the
    /// payload of `failed`, `timedOut` and `skipped` is in ``endings``): a node's end is kept
    /// here and nowhere else. `admitting`: a task whose dependencies have ended waits for a
    /// place in each limit it names (``GraphAdmissions``), holding no slot of the run.
    enum Phase: UInt8 {
        case waiting, ready, admitting, running
        case succeeded, failed, timedOut, skipped, cancelled

        var hasEnded: Bool { rawValue >= Phase.succeeded.rawValue }
        /// Not handed to a worker yet, and not ended: what a stop ends as cancelled.
        var hasNotStarted: Bool { rawValue < Phase.running.rawValue }
    }

    struct Flags: OptionSet {
        // Sixteen bits: the node keeps its 40-byte stride (three Int64, three Int32, these two
        // bytes, the phase and the rank), checked by a test.
        let rawValue: UInt16
        static let isTask = Flags(rawValue: 1 << 0)
        /// A task that appears in events and reports (not a marker, not hidden).
        static let isReported = Flags(rawValue: 1 << 1)
        static let failureIsRequired = Flags(rawValue: 1 << 2)
        static let runsAnywayAfterFailure = Flags(rawValue: 1 << 3)
        /// Running, but between attempts: a removal or a stop now prevents the next one.
        static let backingOff = Flags(rawValue: 1 << 4)
        /// A task whose operation returns `Void`: its result is not kept.
        static let returnsVoid = Flags(rawValue: 1 << 5)
        /// Some node depends on this one: its end has successors to release.
        static let hasSuccessors = Flags(rawValue: 1 << 6)
        /// Removed while its body ran on a worker: that worker's task is cancelled, the task
        /// ends cancelled when the body returns, no attempt follows it, and the worker retires.
        static let removedWhileRunning = Flags(rawValue: 1 << 7)
        /// Its spec names limits: it must hold a place in each before it is ready.
        static let needsAdmission = Flags(rawValue: 1 << 8)
        /// Someone outside the run waits for its value: its end wakes them.
        static let isAwaited = Flags(rawValue: 1 << 9)
        /// Its body runs on its worker under a timeout (``GraphDeadlines``).
        static let hasDeadline = Flags(rawValue: 1 << 10)
        /// Ended while its body ran on its worker — by its deadline, a removal or a stop — and
        /// that worker let go: when the body returns, the worker retires and records nothing.
        static let abandonedOnWorker = Flags(rawValue: 1 << 11)
        /// Its body runs in a task of its own (``TaskSpec/runsInOwnTask``).
        static let runsInOwnTask = Flags(rawValue: 1 << 12)
    }

    /// The changing state of one node: plain integers. Read from the definition once, so the
    /// hot paths never copy its payload out to ask.
    ///
    /// 40 bytes, in this order (a struct is laid out as declared, and this order leaves no
    /// padding); its attempts are not here: 0 until it starts (``startedAt``), 1 from then on,
    /// and a retried task's later ones in ``GraphNodeTable/attempts(of:)``'s side table.
    struct Node {
        /// Nanoseconds since the run started; `never` if it did not happen.
        var queuedAt = never
        var startedAt = never
        var endedAt: Int64 = 0
        /// While waiting: how many dependencies have not ended. While running: the id of the
        /// worker its body runs on (``WorkerRegistry``), which a removal cancels. Read for no
        /// other phase.
        var remaining: Int32 = 0
        /// The first required dependency that did not succeed.
        var blockedBy: Int32 = -1
        /// The dependency that ended last: the link back along the critical path.
        var lastDependency: Int32 = -1
        var flags: Flags
        var phase = Phase.waiting
        let priorityRank: UInt8

        static let never = Int64.min

        init(spec: TaskSpec?, isHidden: Bool) {
            if let spec {
                var flags: Flags = .isTask
                if !isHidden { flags.insert(.isReported) }
                if spec.failure.isRequired { flags.insert(.failureIsRequired) }
                if spec.whenDependencyFails.runsAnyway { flags.insert(.runsAnywayAfterFailure) }
                if spec.returnsVoid { flags.insert(.returnsVoid) }
                if spec.needsAdmission { flags.insert(.needsAdmission) }
                // ``TaskSpec/hasDeadlineOnWorker``, with one test for a task without a timeout.
                if spec.runsInOwnTask {
                    flags.insert(.runsInOwnTask)
                } else if spec.timeout != nil {
                    flags.insert(.hasDeadline)
                }
                self.flags = flags
                priorityRank = spec.priorityRank
            } else {
                flags = []
                priorityRank = 0
            }
        }

        /// The same, from a spec the caller keeps alive (the definitions hold it).
        init(unretainedSpec spec: Unmanaged<TaskSpec>?, isHidden: Bool) {
            if let spec {
                self = spec._withUnsafeGuaranteedRef { Node(spec: $0, isHidden: isHidden) }
            } else {
                self.init(spec: nil, isHidden: isHidden)
            }
        }

        var isTask: Bool { flags.contains(.isTask) }
    }

    var nodes: [Node] = []
    /// How many nodes have ended.
    var ended = 0
    /// The attempt a retried task is at, from its second on; see ``attempts(of:)``.
    private var laterAttempts: [Int32: Int32] = [:]

    /// How many attempts `index` has begun: 0 until it is handed to a worker, 1 from then on
    /// unless it was retried. Kept out of the node: few tasks are retried.
    func attempts(of index: Int) -> Int32 {
        if !laterAttempts.isEmpty, let attempts = laterAttempts[Int32(index)] { return attempts }
        return nodes[index].startedAt == Node.never ? 0 : 1
    }

    /// Attempt `attempt` (2 or later) of `index` begins.
    mutating func setAttempts(_ attempt: Int32, of index: Int) { laterAttempts[Int32(index)] = attempt }
    /// The outcomes that carry a payload (failed, timed out, skipped), by node.
    private(set) var endings: [Int32: TaskOutcome] = [:]
    /// Results by node, made when the first task that returns something other than `Void`
    /// ends: tasks still pending, and tasks that return nothing, cost nothing here.
    private var results: [(any Sendable)?] = []
    /// Tasks whose removal ended them, as cancelled: a deliberate act, so neither that end nor
    /// the skips it causes is a failure of the run. Read only when a required task ends without
    /// succeeding.
    private(set) var removed: Set<Int32> = []

    /// Makes room for `count` more nodes' results, once results are kept at all.
    mutating func grow(by count: Int) {
        if !results.isEmpty { results.append(contentsOf: repeatElement(nil, count: count)) }
    }

    /// Ends `index` with `outcome` at `now`; returns whether it is a reported task (whose end
    /// is recorded as an event).
    mutating func end(_ index: Int, _ outcome: TaskOutcome, at now: Int64) -> Bool {
        let phase: Phase
        switch outcome {
        case .succeeded: phase = .succeeded
        case .cancelled: phase = .cancelled
        case .failed: phase = .failed
        case .timedOut: phase = .timedOut
        case .skipped: phase = .skipped
        }
        if phase != .succeeded, phase != .cancelled { endings[Int32(index)] = outcome }
        nodes[index].phase = phase
        nodes[index].endedAt = now
        ended += 1
        return nodes[index].flags.contains(.isReported)
    }

    mutating func markRemoved(_ index: Int) { removed.insert(Int32(index)) }

    /// Marks running `index` removed while its body runs (``Flags/removedWhileRunning``): it
    /// ends cancelled when that body returns. Returns its worker, whose task to cancel; `nil`
    /// if it was marked already.
    mutating func markRemovedWhileRunning(_ index: Int) -> Int32? {
        guard !nodes[index].flags.contains(.removedWhileRunning) else { return nil }
        nodes[index].flags.insert(.removedWhileRunning)
        removed.insert(Int32(index))
        return nodes[index].remaining
    }

    /// Keeps the result of a task that succeeded, for dependents to read, unless it returns
    /// nothing, has ended already (its run stopped while its body ran) or was removed while its
    /// body ran (it ends cancelled). Call it
    /// just before ``GraphStateMachine/complete(_:outcome:startedAt:now:helper:effects:)``.
    mutating func keep(_ result: any Sendable, of node: Int) {
        // A task removed while its body ran ends cancelled: its value is discarded.
        guard !nodes[node].phase.hasEnded, nodes[node].flags.isDisjoint(with: [.returnsVoid, .removedWhileRunning])
        else { return }
        if results.isEmpty { results = Array(repeating: nil, count: nodes.count) }
        results[node] = result
    }

    /// The result of `index`, if it succeeded.
    func result(of index: Int) -> (any Sendable)? {
        guard nodes[index].phase == .succeeded else { return nil }
        if results.isEmpty { return () }
        return results[index] ?? ()
    }

    /// How `node` ended (`cancelled` if it has not), given its entry in `endings`.
    static func outcome(of node: Node, _ ending: TaskOutcome?) -> TaskOutcome {
        switch node.phase {
        case .succeeded: .succeeded
        case .waiting, .ready, .admitting, .running, .cancelled: .cancelled
        case .failed, .timedOut, .skipped: ending ?? .cancelled
        }
    }

    /// Whether skipped `index` lacks a removed task: the dependency it names was ended by its
    /// removal (cancelled), or was itself skipped for lack of a removed one.
    func lacksOnlyRemoved(_ index: Int) -> Bool {
        var cursor = index
        while !removed.isEmpty {
            if removed.contains(Int32(cursor)) { return nodes[cursor].phase == .cancelled }
            guard nodes[cursor].phase == .skipped, nodes[cursor].blockedBy >= 0 else { return false }
            cursor = Int(nodes[cursor].blockedBy)
        }
        return false
    }

    // MARK: - A compiled graph's nodes

    /// The nodes of a compiled graph's first insertion into a running machine, made in one
    /// pass: a task with no dependency is queued on the spot — a root of the ready queue —
    /// until the first node with none that needs more (a marker), from which on such nodes go
    /// to `cascade`, so the events stay in the order of the nodes whatever the kinds.
    struct CompiledNodes {
        var nodes: [Node] = []
        var specs: [Unmanaged<TaskSpec>?]
        var roots: [ReadyQueue.Root] = []
        var samePriority = true
        var cascade: [Int32] = []
        /// The markers, whose milestones the machine registers.
        var markers: [Int32] = []
    }

    static func makeCompiled(_ definitions: [NodeDefinition], _ compiled: CompiledGraph, now: Int64) -> CompiledNodes {
        let count = definitions.count
        var roots: [ReadyQueue.Root] = []
        // Room for the nodes that depend on nothing, not for every node: the ready queue keeps
        // this array for the whole run.
        roots.reserveCapacity(compiled.independentCount)
        var cascade: [Int32] = []
        var markers: [Int32] = []
        var samePriority = true
        // Written in place through unsafe buffers, and each spec read unretained (the
        // definitions hold it): this runs once per node at the start of every run, where
        // appending, a retain and a release per node cost more than making the node.
        var specs = [Unmanaged<TaskSpec>?](repeating: nil, count: count)
        // Not for an empty graph: `Array(unsafeUninitializedCapacity: 0)` writes the count of the
        // standard library's one shared empty array, a write ThreadSanitizer reports as a race
        // when two empty runs start at once.
        guard count > 0 else { return CompiledNodes(specs: specs) }
        let nodes = [Node](unsafeUninitializedCapacity: count) { nodeBuffer, initialized in
            definitions.withUnsafeBufferPointer { definitions in
                compiled.dependencyStart.withUnsafeBufferPointer { dependencyStart in
                    specs.withUnsafeMutableBufferPointer { specBuffer in
                        for offset in 0..<count {
                            let spec = definitions[offset].unretainedSpec
                            var node = Node(unretainedSpec: spec, isHidden: definitions[offset].isHidden)
                            node.remaining = dependencyStart[offset + 1] - dependencyStart[offset]
                            if node.remaining == 0 {
                                // A task that names limits asks for its places in `release`.
                                if spec != nil, cascade.isEmpty, !node.flags.contains(.needsAdmission) {
                                    node.phase = .ready
                                    node.queuedAt = now
                                    if let firstRoot = roots.first, firstRoot.priority != node.priorityRank {
                                        samePriority = false
                                    }
                                    roots.append(ReadyQueue.Root(node: Int32(offset), priority: node.priorityRank))
                                } else {
                                    cascade.append(Int32(offset))
                                }
                            }
                            if spec == nil { markers.append(Int32(offset)) }
                            (nodeBuffer.baseAddress! + offset).initialize(to: node)
                            specBuffer[offset] = spec
                        }
                    }
                }
            }
            initialized = count
        }
        return CompiledNodes(
            nodes: nodes, specs: specs, roots: roots, samePriority: samePriority, cascade: cascade, markers: markers)
    }

    // MARK: - The report

    /// The chain of reported tasks that started, from the first to `last`, through each
    /// node's last dependency.
    func criticalPath(endingAt last: Int, definitions: [NodeDefinition]) -> [String] {
        var path: [String] = []
        var cursor = last
        while cursor >= 0 {
            let node = nodes[cursor]
            if node.flags.contains(.isReported), node.startedAt != Node.never { path.append(definitions[cursor].id) }
            cursor = Int(node.lastDependency)
        }
        return path.reversed()
    }

    /// The node that ended last (ties go to the later node: a dependent ends no earlier than
    /// its dependencies); -1 for no nodes.
    var lastEnded: Int {
        var last = -1
        for index in nodes.indices where last < 0 || nodes[index].endedAt >= nodes[last].endedAt {
            last = index
        }
        return last
    }

    /// A record of each reported task, made from a copy of the final state.
    static func taskRecords(table: GraphNodeTable, topology: GraphTopology) -> [TaskRecord] {
        let (nodes, endings, removed) = (table.nodes, table.endings, table.removed)
        var records: [TaskRecord] = []
        records.reserveCapacity(nodes.count)
        let definitions = topology.definitions
        for index in nodes.indices {
            let node = nodes[index]
            // `definitions` holds the spec.
            guard node.flags.contains(.isReported), let spec = topology.specs[index]?.takeUnretainedValue() else {
                continue
            }
            var dependencies = definitions[index].requires
            for id in definitions[index].after
            where topology.position(of: id).map({ !definitions[Int($0)].isHidden }) ?? false {
                dependencies.append(id)
            }
            records.append(
                TaskRecord(
                    id: definitions[index].id,
                    stage: definitions[index].stage,
                    dependencies: dependencies,
                    outcome: outcome(of: node, endings[Int32(index)]),
                    queuedAt: node.queuedAt == Node.never ? nil : .nanoseconds(node.queuedAt),
                    startedAt: node.startedAt == Node.never ? nil : .nanoseconds(node.startedAt),
                    endedAt: .nanoseconds(node.endedAt),
                    attempts: Int(table.attempts(of: index)),
                    placement: spec.placement,
                    parent: definitions[index].parent,
                    wasRemoved: removed.contains(Int32(index))
                )
            )
        }
        return subtasksAfterTheirParents(records)
    }

    /// `records` with each task's subtasks right after it, depth first, in the order added
    /// within one parent. A subtask is added after its parent, so a report without subtasks
    /// keeps its order and costs one pass.
    static func subtasksAfterTheirParents(_ records: [TaskRecord]) -> [TaskRecord] {
        guard records.contains(where: { $0.parent != nil }) else { return records }
        let ids = Set(records.map(\.id))
        var children: [String: [Int]] = [:]
        var roots: [Int] = []
        for (position, record) in records.enumerated() {
            if let parent = record.parent, ids.contains(parent) {
                children[parent, default: []].append(position)
            } else {
                roots.append(position)
            }
        }
        var ordered: [TaskRecord] = []
        ordered.reserveCapacity(records.count)
        var stack = Array(roots.reversed())
        while let position = stack.popLast() {
            ordered.append(records[position])
            stack.append(contentsOf: (children[records[position].id] ?? []).reversed())
        }
        return ordered
    }
}

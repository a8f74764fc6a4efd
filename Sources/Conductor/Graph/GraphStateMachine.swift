import HeapModule

/// The pure core of a run: which tasks are ready, running and ended, and what must happen
/// next. No locks, no clocks, no tasks: each transition takes the time as an argument and
/// returns what the storage must do once it has released its lock.
struct GraphStateMachine {
    struct Edge {
        var node: Int32
        var requiresSuccess: Bool
    }

    enum Phase: UInt8 { case waiting, ready, running, ended }

    /// The changing state of one node; what never changes stays in `definitions`, which a
    /// run shares with the graph it came from instead of copying.
    struct Node {
        /// Read from the definition once, so the hot paths never copy its payload out to ask.
        let isTask: Bool
        /// A task that appears in events and reports (not a marker, not hidden).
        let isReported: Bool
        let failureIsRequired: Bool
        let runsAnywayAfterFailure: Bool
        let priorityRank: UInt8
        var successors: [Edge] = []
        var remaining: Int32 = 0
        /// The first required dependency that did not succeed.
        var blockedBy: Int32 = -1
        /// The dependency that ended last: the link back along the critical path.
        var lastDependency: Int32 = -1
        var phase: Phase = .waiting
        var outcome: TaskOutcome?
        var result: (any Sendable)?
        var queuedAt: Duration?
        var startedAt: Duration?
        var endedAt: Duration = .zero
        var attempts: Int32 = 0

        init(definition: NodeDefinition) {
            if case .task(let spec) = definition.kind {
                isTask = true
                isReported = !definition.isHidden
                failureIsRequired = spec.failure.isRequired
                runsAnywayAfterFailure = spec.whenDependencyFails.runsAnyway
                priorityRank = spec.priority.rawValue
            } else {
                isTask = false
                isReported = false
                failureIsRequired = false
                runsAnywayAfterFailure = false
                priorityRank = 0
            }
        }
    }

    struct ReadyEntry: Comparable {
        var priority: UInt8
        var sequence: Int
        var node: Int32

        static func < (lhs: ReadyEntry, rhs: ReadyEntry) -> Bool {
            if lhs.priority != rhs.priority { return lhs.priority < rhs.priority }
            return lhs.sequence > rhs.sequence
        }

        static func == (lhs: ReadyEntry, rhs: ReadyEntry) -> Bool { lhs.node == rhs.node }
    }

    enum RunPhase {
        case running
        case stopping(RunOutcome)
        case finished(RunOutcome)
    }

    /// A task handed to a worker.
    struct Assignment {
        var node: Int
        var id: String
        var spec: TaskSpec
    }

    /// What the storage must do after a transition, outside the lock.
    struct Effects {
        var resumeDriver: CheckedContinuation<Void, Never>?
        var reachedMilestones: [(name: String, at: Duration)] = []
        var finished = false
        var abandonDetached: [@Sendable () -> Void] = []
    }

    private(set) var definitions: [NodeDefinition] = []
    private(set) var nodes: [Node] = []
    private(set) var indexByID: [String: Int32] = [:]
    private var readyQueue = Heap<ReadyEntry>()
    private var sequence = 0
    private let concurrencyLimit: Int
    /// How many workers start on threads of their own before the rest start inline.
    private let parallelWorkers: Int
    private(set) var finishedAt: Duration = .zero
    private(set) var running = 0
    private(set) var liveWorkers = 0
    private(set) var ended = 0
    private(set) var phase: RunPhase = .running
    private(set) var milestonesReached: [(name: String, at: Duration)] = []
    private var driver: CheckedContinuation<Void, Never>?
    private var driverMustCancelAll = false
    private var detached: [Int: @Sendable () -> Void] = [:]
    /// Reused by every completion for the nodes it makes ready, so ending a task allocates nothing.
    private var readyScratch: [Int32] = []
    /// Events produced by the last transitions, drained by the storage into the journal.
    var outbox: [GraphEvent] = []

    init(concurrencyLimit: Int, parallelWorkers: Int) {
        self.concurrencyLimit = max(1, concurrencyLimit)
        self.parallelWorkers = max(0, parallelWorkers)
    }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    var outcome: RunOutcome? {
        if case .finished(let outcome) = phase { return outcome }
        return nil
    }

    // MARK: - Building

    /// Adds validated definitions, which may depend on nodes already present and on each
    /// other in any order. Nodes whose dependencies have all ended become ready.
    ///
    /// A graph that was built in dependency order hands over its index and its edges already
    /// resolved (`compiled`), so the first insertion hashes no id at all.
    mutating func insert(
        _ newDefinitions: [NodeDefinition],
        compiled: CompiledGraph? = nil,
        now: Duration,
        effects: inout Effects
    ) {
        let first = nodes.count
        if first == 0, let compiled {
            definitions = newDefinitions
            indexByID = compiled.index
        } else {
            indexByID.reserveCapacity(first + newDefinitions.count)
            for (offset, definition) in newDefinitions.enumerated() {
                indexByID[definition.id] = Int32(first + offset)
            }
            definitions.append(contentsOf: newDefinitions)
        }
        nodes.reserveCapacity(first + newDefinitions.count)
        for definition in newDefinitions { nodes.append(Node(definition: definition)) }
        for offset in newDefinitions.indices {
            let index = first + offset
            if let compiled, first == 0 {
                for edge in compiled.edges[offset] { wire(edge, into: index) }
            } else {
                let definition = newDefinitions[offset]
                for id in definition.requires { wire(Edge(node: indexByID[id]!, requiresSuccess: true), into: index) }
                for id in definition.after { wire(Edge(node: indexByID[id]!, requiresSuccess: false), into: index) }
            }
        }
        var cascade: [Int32] = []
        for index in first..<nodes.count where nodes[index].remaining == 0 {
            cascade.append(Int32(index))
        }
        release(&cascade, now: now, effects: &effects)
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
    }

    /// Connects `node` to the dependency `edge` names: counted if it is still to end,
    /// otherwise its outcome is taken into account at once.
    private mutating func wire(_ edge: Edge, into node: Int) {
        let dependency = Int(edge.node)
        if nodes[dependency].phase == .ended {
            if edge.requiresSuccess, nodes[node].blockedBy < 0, nodes[dependency].outcome?.isSuccess != true {
                nodes[node].blockedBy = edge.node
            }
            let last = nodes[node].lastDependency
            if last < 0 || nodes[dependency].endedAt >= nodes[Int(last)].endedAt {
                nodes[node].lastDependency = edge.node
            }
        } else {
            nodes[node].remaining += 1
            nodes[dependency].successors.append(Edge(node: Int32(node), requiresSuccess: edge.requiresSuccess))
        }
    }

    // MARK: - Driver

    enum DriverAction {
        /// Start a worker for the assignment; `inline` workers run on the driver's thread
        /// until they first suspend, so no-op work never pays for a thread hop.
        case spawn(Assignment, inline: Bool)
        case cancelAll
        case wait
        case finish
    }

    /// What the driver (the task that owns the task group) should do next.
    mutating func nextForDriver(now: Duration) -> DriverAction {
        if driverMustCancelAll {
            driverMustCancelAll = false
            return .cancelAll
        }
        if isFinished { return .finish }
        if let assignment = takeNext(now: now) {
            liveWorkers += 1
            return .spawn(assignment, inline: liveWorkers > parallelWorkers)
        }
        return .wait
    }

    /// Parks the driver; returns `false` (and keeps nothing) if there is already work for it.
    mutating func park(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard !hasDriverWork else { return false }
        driver = continuation
        return true
    }

    private var hasDriverWork: Bool {
        if driverMustCancelAll || isFinished { return true }
        if case .running = phase { return !readyQueue.isEmpty && running < concurrencyLimit }
        return false
    }

    private mutating func wakeDriverIfNeeded(_ effects: inout Effects) {
        guard driver != nil, hasDriverWork else { return }
        effects.resumeDriver = driver
        driver = nil
    }

    // MARK: - Workers

    /// Records the end of `node` and hands the worker its next task, if any.
    mutating func complete(
        _ node: Int,
        outcome: TaskOutcome,
        result: (any Sendable)?,
        now: Duration,
        effects: inout Effects
    ) -> Assignment? {
        running -= 1
        if !detached.isEmpty { detached[node] = nil }
        if nodes[node].phase != .ended {
            nodes[node].result = result
            end(node, outcome: outcome, now: now, effects: &effects)
        }
        let next = takeNext(now: now)
        if next == nil { liveWorkers -= 1 }
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return next
    }

    /// A retry of `node` is about to start.
    mutating func attemptStarting(_ node: Int, attempt: Int, now: Duration) {
        nodes[node].attempts = Int32(attempt)
        outbox.append(.taskStarted(definitions[node].id, attempt: attempt, at: now))
    }

    mutating func attemptFailed(_ node: Int, attempt: Int, error: any Error, delay: Duration, now: Duration) {
        outbox.append(.taskRetried(definitions[node].id, attempt: attempt, error: error, delay: delay, at: now))
    }

    /// Remembers how to abandon a detached operation, so removing the node or stopping the
    /// run ends it at once. Returns `false` if that should happen now.
    mutating func registerDetached(_ node: Int, abandon: @escaping @Sendable () -> Void) -> Bool {
        guard nodes[node].phase == .running, case .running = phase else { return false }
        detached[node] = abandon
        return true
    }

    private mutating func takeNext(now: Duration) -> Assignment? {
        guard case .running = phase, running < concurrencyLimit else { return nil }
        while let entry = readyQueue.popMax() {
            let index = Int(entry.node)
            guard nodes[index].phase == .ready, case .task(let spec) = definitions[index].kind else { continue }
            nodes[index].phase = .running
            nodes[index].startedAt = now
            nodes[index].attempts = 1
            running += 1
            let id = definitions[index].id
            outbox.append(.taskStarted(id, attempt: 1, at: now))
            return Assignment(node: index, id: id, spec: spec)
        }
        return nil
    }

    // MARK: - Stopping

    /// Cancels the run: pending tasks end as cancelled, running ones are told to stop.
    mutating func cancel(now: Duration, effects: inout Effects) {
        stop(.cancelled, now: now, effects: &effects)
        finishIfDone(now: now, effects: &effects)
    }

    enum RemoveResult { case removed, alreadyEnded, unknown }

    /// Removes a task that has not ended: a pending one never starts, a running detached one
    /// is cancelled at once. Either way it ends as cancelled and its dependents see that.
    mutating func remove(_ id: String, now: Duration, effects: inout Effects) -> RemoveResult {
        guard let index = indexByID[id].map(Int.init), !definitions[index].isHidden else { return .unknown }
        switch nodes[index].phase {
        case .ended:
            return .alreadyEnded
        case .running:
            if let abandon = detached.removeValue(forKey: index) { effects.abandonDetached.append(abandon) }
            end(index, outcome: .cancelled, now: now, effects: &effects)
        case .waiting, .ready:
            end(index, outcome: .cancelled, now: now, effects: &effects)
        }
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return .removed
    }

    private mutating func stop(_ outcome: RunOutcome, now: Duration, effects: inout Effects) {
        guard case .running = phase else { return }
        phase = .stopping(outcome)
        readyQueue = Heap()
        for index in nodes.indices where nodes[index].phase == .waiting || nodes[index].phase == .ready {
            endQuietly(index, outcome: .cancelled, now: now)
        }
        effects.abandonDetached.append(contentsOf: detached.values)
        detached.removeAll()
        driverMustCancelAll = true
        wakeDriverIfNeeded(&effects)
    }

    // MARK: - Ending nodes

    /// Ends a node and lets its successors go, cascading through markers and skips.
    private mutating func end(_ index: Int, outcome: TaskOutcome, now: Duration, effects: inout Effects) {
        endQuietly(index, outcome: outcome, now: now)
        if nodes[index].failureIsRequired, case .running = phase {
            switch outcome {
            case .failed(let error):
                stop(.failed(.taskFailed(definitions[index].id, error)), now: now, effects: &effects)
                return
            case .timedOut(let after):
                stop(.failed(.timedOut(definitions[index].id, after: after)), now: now, effects: &effects)
                return
            default:
                break
            }
        }
        var ready = readyScratch
        readyScratch = []
        ready.removeAll(keepingCapacity: true)
        appendSuccessorsMadeReady(by: index, to: &ready)
        release(&ready, now: now, effects: &effects)
        readyScratch = ready
    }

    private mutating func endQuietly(_ index: Int, outcome: TaskOutcome, now: Duration) {
        nodes[index].phase = .ended
        nodes[index].outcome = outcome
        nodes[index].endedAt = now
        ended += 1
        guard nodes[index].isReported else { return }
        let id = definitions[index].id
        switch outcome {
        case .succeeded: outbox.append(.taskSucceeded(id, at: now))
        case .failed(let error): outbox.append(.taskFailed(id, error: error, at: now))
        case .timedOut: outbox.append(.taskTimedOut(id, at: now))
        case .skipped(let dependency): outbox.append(.taskSkipped(id, dependency: dependency, at: now))
        case .cancelled: outbox.append(.taskCancelled(id, at: now))
        }
    }

    private mutating func appendSuccessorsMadeReady(by index: Int, to ready: inout [Int32]) {
        let succeeded = nodes[index].outcome?.isSuccess == true
        for edge in nodes[index].successors {
            let successor = Int(edge.node)
            guard nodes[successor].phase == .waiting else { continue }
            if edge.requiresSuccess, !succeeded, nodes[successor].blockedBy < 0 {
                nodes[successor].blockedBy = Int32(index)
            }
            nodes[successor].lastDependency = Int32(index)
            nodes[successor].remaining -= 1
            if nodes[successor].remaining == 0 { ready.append(edge.node) }
        }
    }

    /// Moves nodes whose dependencies have all ended on: markers are reached, blocked tasks
    /// skipped, the rest queued, in the order they became ready (so equal priorities stay FIFO).
    /// Iterative, so a long chain of markers cannot overflow the stack.
    private mutating func release(_ work: inout [Int32], now: Duration, effects: inout Effects) {
        var cursor = 0
        while cursor < work.count {
            let next = work[cursor]
            cursor += 1
            let index = Int(next)
            guard nodes[index].phase == .waiting, case .running = phase else { continue }
            if nodes[index].isTask {
                if nodes[index].blockedBy >= 0, !nodes[index].runsAnywayAfterFailure {
                    let dependency = definitions[Int(nodes[index].blockedBy)].id
                    endQuietly(index, outcome: .skipped(dependency: dependency), now: now)
                    appendSuccessorsMadeReady(by: index, to: &work)
                } else {
                    nodes[index].phase = .ready
                    nodes[index].queuedAt = now
                    outbox.append(.taskQueued(definitions[index].id, at: now))
                    readyQueue.insert(
                        ReadyEntry(priority: nodes[index].priorityRank, sequence: sequence, node: next))
                    sequence += 1
                }
                continue
            }
            guard case .marker(let milestone, let startsStage) = definitions[index].kind else { continue }
            endQuietly(index, outcome: .succeeded, now: now)
            if let startsStage { outbox.append(.stageStarted(startsStage, at: now)) }
            if let milestone {
                outbox.append(.milestoneReached(milestone, at: now))
                milestonesReached.append((milestone, now))
                effects.reachedMilestones.append((milestone, now))
            }
            appendSuccessorsMadeReady(by: index, to: &work)
        }
    }

    private mutating func finishIfDone(now: Duration, effects: inout Effects) {
        guard ended == nodes.count, !isFinished else { return }
        let outcome: RunOutcome
        switch phase {
        case .running: outcome = .completed
        case .stopping(let reason): outcome = reason
        case .finished: return
        }
        phase = .finished(outcome)
        finishedAt = now
        outbox.append(.runFinished(outcome, at: now))
        effects.finished = true
        if let driver {
            effects.resumeDriver = driver
            self.driver = nil
        }
    }

    // MARK: - Reading

    func result(of id: String) -> (any Sendable)? {
        guard let index = indexByID[id] else { return nil }
        let node = nodes[Int(index)]
        guard node.phase == .ended, node.outcome?.isSuccess == true else { return nil }
        return node.result
    }
}

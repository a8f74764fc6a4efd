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
        /// The task's settings, shared with the graph (nil for a marker).
        let spec: TaskSpec?
        /// Successors wired after the first insertion (a run's additions); those of the
        /// first insertion of a compiled graph are in the machine's flat successor table.
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
        /// Running, but between attempts: a removal or a stop now prevents the next one.
        var backingOff = false

        init(definition: borrowing NodeDefinition) {
            if case .task(let spec) = definition.kind {
                isTask = true
                isReported = !definition.isHidden
                failureIsRequired = spec.failure.isRequired
                runsAnywayAfterFailure = spec.whenDependencyFails.runsAnyway
                priorityRank = spec.priority.rawValue
                self.spec = spec
            } else {
                isTask = false
                isReported = false
                failureIsRequired = false
                runsAnywayAfterFailure = false
                priorityRank = 0
                spec = nil
            }
        }
    }

    enum RunPhase {
        case running
        case stopping(RunOutcome)
        case finished(RunOutcome)
    }

    /// A task handed to a worker. `detached` is the first attempt of a task whose body runs
    /// in a task of its own, registered before the worker sees it.
    struct Assignment {
        var node: Int
        var id: String
        var spec: TaskSpec
        var detached: DetachedAttempt?
    }

    /// What the storage must do after a transition, outside the lock. Most completions
    /// leave nothing to do; `isEmpty` lets the storage see that with one load.
    struct Effects {
        private(set) var isEmpty = true
        var resumeDriver: CheckedContinuation<Void, Never>? {
            didSet { isEmpty = false }
        }
        var reachedMilestones: [(name: String, at: Duration)] = [] {
            didSet { isEmpty = false }
        }
        var finished = false {
            didSet { isEmpty = false }
        }
        var abandonDetached: [DetachedAttempt] = [] {
            didSet { isEmpty = false }
        }
    }

    private(set) var definitions: [NodeDefinition] = []
    private(set) var nodes: [Node] = []
    private(set) var indexByID: [String: Int32] = [:]
    /// The successors of the nodes of a compiled graph's first insertion, flat: node `i`'s
    /// are `firstSuccessors[firstSuccessorStart[i] ..< firstSuccessorStart[i + 1]]`. One
    /// allocation for the whole graph instead of an array per node.
    private var firstSuccessorStart: [Int32] = []
    private var firstSuccessors: [Edge] = []
    private var readyQueue = ReadyQueue()
    private let concurrencyLimit: Int
    /// How many workers start on threads of their own before the rest start inline.
    private let parallelWorkers: Int
    private(set) var finishedAt: Duration = .zero
    private(set) var running = 0
    private(set) var liveWorkers = 0
    private(set) var ended = 0
    private(set) var phase: RunPhase = .running
    private(set) var milestonesReached: [(name: String, at: Duration)] = []
    private var driver: CheckedContinuation<Void, Never>? {
        didSet { driverIsParked = driver != nil }
    }
    /// Whether `driver` holds a continuation: every completion asks, and a Bool answers
    /// without the generic optional check a continuation needs.
    private var driverIsParked = false
    private var driverMustCancelAll = false
    /// The attempt in flight of each running task whose body runs in a task of its own.
    private var detached: [Int: DetachedAttempt] = [:]
    /// Reused by every completion for the nodes it makes ready, so ending a task allocates nothing.
    private var readyScratch: [Int32] = []
    /// Events produced by the last transitions, drained by the storage into the journal.
    var outbox: [GraphEventRecord] = []
    /// Definitions inserted by the last transitions, which the storage registers with the
    /// event log before the records that name them.
    var inserted: [(first: Int, definitions: [NodeDefinition])] = []

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
        if !newDefinitions.isEmpty { inserted.append((first, newDefinitions)) }
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
        for offset in newDefinitions.indices { nodes.append(Node(definition: newDefinitions[offset])) }
        if let compiled, first == 0 {
            wireFlat(compiled.edges)
        }
        for offset in newDefinitions.indices where compiled == nil || first != 0 {
            let index = first + offset
            for id in newDefinitions[offset].requires {
                wire(Edge(node: indexByID[id]!, requiresSuccess: true), into: index)
            }
            for id in newDefinitions[offset].after {
                wire(Edge(node: indexByID[id]!, requiresSuccess: false), into: index)
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

    /// Wires the first insertion of a compiled graph, whose nodes are `0 ..< edges.count` and
    /// none of which has ended: counts each node's dependencies and lays the successors out
    /// flat (a counting sort by dependency).
    private mutating func wireFlat(_ edges: [[Edge]]) {
        var start = [Int32](repeating: 0, count: edges.count + 1)
        for node in edges.indices {
            nodes[node].remaining = Int32(edges[node].count)
            for edge in edges[node] { start[Int(edge.node) + 1] += 1 }
        }
        for node in edges.indices { start[node + 1] += start[node] }
        var next = start
        var flat = [Edge](repeating: Edge(node: 0, requiresSuccess: false), count: Int(start[edges.count]))
        for node in edges.indices {
            for edge in edges[node] {
                let dependency = Int(edge.node)
                flat[Int(next[dependency])] = Edge(node: Int32(node), requiresSuccess: edge.requiresSuccess)
                next[dependency] += 1
            }
        }
        firstSuccessorStart = start
        firstSuccessors = flat
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
        guard driverIsParked, hasDriverWork else { return }
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

    enum RetryDecision {
        /// Run the next attempt; a detached task's attempt is already registered.
        case start(DetachedAttempt?)
        /// The run stopped or the task was removed during the backoff: no further attempt.
        case refused
    }

    /// The backoff of `node` is over: the next attempt starts only if the run is still
    /// running and the task was not removed meanwhile — the one place a retry wins the right
    /// to start, so nothing starts after a stop.
    mutating func retryStarting(_ node: Int, attempt: Int, now: Duration) -> RetryDecision {
        guard case .running = phase, nodes[node].phase == .running else { return .refused }
        nodes[node].backingOff = false
        nodes[node].attempts = Int32(attempt)
        outbox.append(.started(node: Int32(node), attempt: Int32(attempt), at: now))
        guard let spec = nodes[node].spec, spec.runsDetached else { return .start(nil) }
        let attempt = DetachedAttempt()
        detached[node] = attempt
        return .start(attempt)
    }

    mutating func attemptFailed(_ node: Int, attempt: Int, error: any Error, delay: Duration, now: Duration) {
        detached[node] = nil
        nodes[node].backingOff = true
        outbox.append(
            .other(.taskRetried(definitions[node].id, attempt: attempt, error: error, delay: delay, at: now)))
    }

    private mutating func takeNext(now: Duration) -> Assignment? {
        guard case .running = phase, running < concurrencyLimit else { return nil }
        while let entry = readyQueue.popFirst() {
            let index = Int(entry)
            guard nodes[index].phase == .ready, let spec = nodes[index].spec else { continue }
            nodes[index].phase = .running
            nodes[index].startedAt = now
            nodes[index].attempts = 1
            running += 1
            let id = definitions[index].id
            outbox.append(.started(node: Int32(index), attempt: 1, at: now))
            var attempt: DetachedAttempt?
            if spec.runsDetached {
                attempt = DetachedAttempt()
                detached[index] = attempt
            }
            return Assignment(node: index, id: id, spec: spec, detached: attempt)
        }
        return nil
    }

    // MARK: - Stopping

    /// Cancels the run: pending tasks end as cancelled, running ones are told to stop.
    mutating func cancel(now: Duration, effects: inout Effects) {
        stop(.cancelled, now: now, effects: &effects)
        finishIfDone(now: now, effects: &effects)
    }

    enum RemoveResult {
        case decided(TaskRemoval)
        /// A detached attempt is in flight: abandoning it (outside the lock) decides whether
        /// its start was prevented, its body abandoned, or the body settled first. The
        /// worker then records what the attempt settled with.
        case abandon(DetachedAttempt)
        case unknown
    }

    /// Removes a task that has not ended. One that has not won the right to start (or waits
    /// between attempts) ends as cancelled here and never runs again; a detached attempt in
    /// flight is abandoned; a body running on a worker cannot be stopped and is left to end.
    mutating func remove(_ id: String, now: Duration, effects: inout Effects) -> RemoveResult {
        guard let index = indexByID[id].map(Int.init), !definitions[index].isHidden else { return .unknown }
        switch nodes[index].phase {
        case .ended:
            return .decided(.alreadyEnded)
        case .running:
            if let attempt = detached.removeValue(forKey: index) { return .abandon(attempt) }
            guard nodes[index].backingOff else { return .decided(.stillRunning) }
            end(index, outcome: .cancelled, now: now, effects: &effects)
        case .waiting, .ready:
            end(index, outcome: .cancelled, now: now, effects: &effects)
        }
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return .decided(.prevented)
    }

    private mutating func stop(_ outcome: RunOutcome, now: Duration, effects: inout Effects) {
        guard case .running = phase else { return }
        phase = .stopping(outcome)
        readyQueue.removeAll()
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
        switch outcome {
        case .succeeded: outbox.append(.succeeded(node: Int32(index), at: now))
        case .failed(let error): outbox.append(.other(.taskFailed(definitions[index].id, error: error, at: now)))
        case .timedOut: outbox.append(.other(.taskTimedOut(definitions[index].id, at: now)))
        case .skipped(let dependency):
            outbox.append(.other(.taskSkipped(definitions[index].id, dependency: dependency, at: now)))
        case .cancelled: outbox.append(.cancelled(node: Int32(index), at: now))
        }
    }

    private mutating func appendSuccessorsMadeReady(by index: Int, to ready: inout [Int32]) {
        let succeeded = nodes[index].outcome?.isSuccess == true
        if index + 1 < firstSuccessorStart.count {
            for position in Int(firstSuccessorStart[index])..<Int(firstSuccessorStart[index + 1]) {
                release(firstSuccessors[position], from: index, succeeded: succeeded, to: &ready)
            }
        }
        for edge in nodes[index].successors {
            release(edge, from: index, succeeded: succeeded, to: &ready)
        }
    }

    private mutating func release(_ edge: Edge, from index: Int, succeeded: Bool, to ready: inout [Int32]) {
        let successor = Int(edge.node)
        guard nodes[successor].phase == .waiting else { return }
        if edge.requiresSuccess, !succeeded, nodes[successor].blockedBy < 0 {
            nodes[successor].blockedBy = Int32(index)
        }
        nodes[successor].lastDependency = Int32(index)
        nodes[successor].remaining -= 1
        if nodes[successor].remaining == 0 { ready.append(edge.node) }
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
                    outbox.append(.queued(node: next, at: now))
                    readyQueue.append(next, priority: nodes[index].priorityRank)
                }
                continue
            }
            guard case .marker(let milestone, let startsStage) = definitions[index].kind else { continue }
            endQuietly(index, outcome: .succeeded, now: now)
            if let startsStage { outbox.append(.other(.stageStarted(startsStage, at: now))) }
            if let milestone {
                outbox.append(.other(.milestoneReached(milestone, at: now)))
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
        outbox.append(.other(.runFinished(outcome, at: now)))
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

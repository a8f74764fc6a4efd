/// The pure core of a run: which tasks are ready, running and ended, and what must happen
/// next. No locks, no clocks, no tasks: each transition takes the time as an argument and
/// returns what the storage must do once it has released its lock.
///
/// Laid out for the hot path (a no-op task is queued, started and ended thousands of times a
/// millisecond): each node's changing state is a small trivial struct (`Node`, 48 bytes, times
/// as nanosecond offsets); what only some nodes need lives in side tables — the outcome of a
/// task that failed, timed out or was skipped, results other than `Void`, successors wired by
/// a run's additions — and what never changes stays in `definitions`, shared with the graph.
struct GraphStateMachine {
    struct Edge {
        var node: Int32
        var requiresSuccess: Bool
    }

    enum Phase: UInt8 { case waiting, ready, running, ended }

    /// How a node ended; the payload of `failed`, `timedOut` and `skipped` is in `endings`.
    enum Ending: UInt8 { case none, succeeded, failed, timedOut, skipped, cancelled }

    struct Flags: OptionSet {
        let rawValue: UInt8
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
        /// Removed while its body ran on a worker: that body ends as it will, and no attempt
        /// follows it.
        static let removedWhileRunning = Flags(rawValue: 1 << 7)
    }

    /// The changing state of one node: plain integers, so the array of them is copied and
    /// freed without a value witness. Read from the definition once, so the hot paths never
    /// copy its payload out to ask.
    struct Node {
        var remaining: Int32 = 0
        /// The first required dependency that did not succeed.
        var blockedBy: Int32 = -1
        /// The dependency that ended last: the link back along the critical path.
        var lastDependency: Int32 = -1
        var attempts: Int32 = 0
        /// Nanoseconds since the run started; `never` if it did not happen.
        var queuedAt = never
        var startedAt = never
        var endedAt: Int64 = 0
        var phase = Phase.waiting
        var ending = Ending.none
        var flags: Flags
        let priorityRank: UInt8

        static let never = Int64.min

        init(spec: TaskSpec?, isHidden: Bool) {
            if let spec {
                var flags: Flags = .isTask
                if !isHidden { flags.insert(.isReported) }
                if spec.failure.isRequired { flags.insert(.failureIsRequired) }
                if spec.whenDependencyFails.runsAnyway { flags.insert(.runsAnywayAfterFailure) }
                if spec.returnsVoid { flags.insert(.returnsVoid) }
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

    enum RunPhase {
        case running
        case stopping(RunOutcome)
        case finished(RunOutcome)
    }

    /// A task handed to a worker: a trivial value, which an async worker copies without
    /// retains and without value witnesses (it copied the old one, which held the id and the
    /// detached attempt, through its type's metadata twice per task). The first attempt of
    /// a task whose body runs in a task of its own is registered before the worker sees the
    /// assignment; the worker claims it with ``claimAttempt(_:number:)``.
    struct Assignment {
        var node: Int
        /// Unowned and unchecked, which is safe: the spec is held by the definitions, which
        /// only ever grow, for as long as the storage that owns this
        /// machine lives — and only that storage's workers, running methods of it, hold
        /// assignments.
        unowned(unsafe) var spec: TaskSpec
    }

    /// The driver's continuation while it is parked. Boxed: `CheckedContinuation` is a
    /// resilient type, so an optional one held in `Effects` was copied and destroyed through
    /// the runtime's value witnesses on every completion; a class reference is one pointer.
    final class ParkedDriver: Sendable {
        private let continuation: CheckedContinuation<Void, Never>

        init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

        func resume() { continuation.resume() }
    }

    /// What the storage must do after a transition, outside the lock. Most completions
    /// leave nothing to do; `isEmpty` lets the storage see that with one load.
    ///
    /// Plain flags and optional references: the lists only a milestone or a stop fills are
    /// boxed in `Rare`, so making and dropping the effects of a completion retains and
    /// releases nothing (an array, even an empty one, is retained and released with its holder).
    struct Effects {
        // Unchecked, and safe: a `Rare` is made and filled by one transition, under the run's
        // lock, and only read once that transition has returned it (`PendingWakeups` hands
        // it to the thread that performs it, after the lock is released); nothing writes it
        // after it left the transition.
        final class Rare: @unchecked Sendable {
            var reachedMilestones: [(name: String, at: Duration)] = []
            /// The tasks of abandoned attempts' bodies, to cancel.
            var cancelBodies: [Task<Void, Never>] = []
            /// Tasks to resume: workers that waited for an attempt abandonment settled, and
            /// tasks that waited for a milestone now reached or missed.
            var resumeWaiters: [WaiterSet<Void>.Waiter] = []
        }

        private(set) var isEmpty = true
        var resumeDriver: ParkedDriver? {
            didSet { isEmpty = false }
        }
        private(set) var rare: Rare?

        var reachedMilestones: [(name: String, at: Duration)] { rare?.reachedMilestones ?? [] }
        var cancelBodies: [Task<Void, Never>] { rare?.cancelBodies ?? [] }
        var resumeWaiters: [WaiterSet<Void>.Waiter] { rare?.resumeWaiters ?? [] }

        private mutating func rareEffects() -> Rare {
            isEmpty = false
            if let rare { return rare }
            let made = Rare()
            rare = made
            return made
        }

        mutating func reached(_ milestone: String, at time: Duration) {
            rareEffects().reachedMilestones.append((milestone, time))
        }

        /// An attempt was abandoned: its body (if it started) is cancelled, and its worker (if
        /// it waits) resumed, in that order.
        mutating func abandoned(body: Task<Void, Never>?, worker: WaiterSet<Void>.Waiter?) {
            guard body != nil || worker != nil else { return }
            let rare = rareEffects()
            if let body { rare.cancelBodies.append(body) }
            if let worker { rare.resumeWaiters.append(worker) }
        }

        mutating func resume(_ waiters: [WaiterSet<Void>.Waiter]) {
            guard !waiters.isEmpty else { return }
            rareEffects().resumeWaiters.append(contentsOf: waiters)
        }
    }

    private(set) var definitions: [NodeDefinition] = []
    private(set) var nodes: [Node] = []
    /// Each node's settings (nil for a marker), so taking a task never reads its definition.
    ///
    /// Unretained, which is safe: `definitions` holds every spec strongly and only grows, and
    /// this array lives and dies with it. Trivial elements, so building it for a run retains
    /// nothing per node, and taking a task neither retains nor releases its spec.
    private var specs: [Unmanaged<TaskSpec>?] = []
    /// The outcomes that carry a payload (failed, timed out, skipped), by node.
    private var endings: [Int32: TaskOutcome] = [:]
    /// Results by node, made when the first task that returns something other than `Void`
    /// ends: tasks still pending, and tasks that return nothing, cost nothing here.
    private var results: [(any Sendable)?] = []
    private(set) var indexByID: [String: Int32] = [:]
    /// The successors of the nodes of a compiled graph's first insertion, flat: node `i`'s
    /// are `firstSuccessors[firstSuccessorStart[i] ..< firstSuccessorStart[i + 1]]`. One
    /// allocation for the whole graph instead of an array per node.
    private var firstSuccessorStart: [Int32] = []
    private var firstSuccessors: [Edge] = []
    /// Successors wired after the first insertion (a run's additions), by node.
    private var addedSuccessors: [Int32: [Edge]] = [:]
    private var readyQueue = ReadyQueue()
    private let concurrencyLimit: Int
    /// How many helpers may run on threads of their own besides the driver's: one per core
    /// but the driver's.
    private let parallelWorkers: Int
    private(set) var finishedAt: Int64 = 0
    private(set) var running = 0
    private(set) var liveWorkers = 0
    /// Helpers alive: workers started on threads of their own (`spawn(_:inline: false)`).
    private(set) var liveHelpers = 0
    /// A worker gave its thread back because the bodies are long enough to share: the driver
    /// starts the next worker on a thread of its own.
    private(set) var helperWanted = false
    /// How many bodies in a row ran at least ``helperThreshold``, and how many in a row did not.
    private var longBodies = 0
    private var shortBodies = 0
    private(set) var ended = 0
    private(set) var phase: RunPhase = .running {
        didSet {
            isRunning = if case .running = phase { true } else { false }
            isFinished = if case .finished = phase { true } else { false }
        }
    }
    /// `phase` is `.running`; `phase` is `.finished`. Asked on every transition: matching
    /// `phase` itself copies its payload (a `GraphError`) out and destroys it again.
    private(set) var isRunning = true
    private(set) var isFinished = false
    /// The number of the last numbered addition the run holds (see
    /// ``GraphRunStorage/addLeavingWakeups(numbered:now:)``): a caller that hands over a
    /// queue another caller has handed over already learns here which part is in.
    var lastAdditionNumber: UInt64?
    private(set) var milestonesReached: [(name: String, at: Duration)] = []
    /// Each milestone's outcome, by name, and the tasks waiting for it: reached, or missed
    /// once the run finished first. Registered when its marker is added, so a wait that comes
    /// before the marker is reached knows the name.
    private var milestoneOutcomes: [String: AwaitableSettlement<Result<Duration, GraphError>>] = [:]
    private var driver: ParkedDriver?
    private var driverMustCancelAll = false
    /// The current attempt of each running task whose body runs in a task of its own, until
    /// its worker has recorded how it went (``complete(_:outcome:startedAt:now:helper:effects:)``
    /// or ``attemptFailed(_:attempt:error:delay:now:effects:)``).
    private var attemptsInTasks: [Int: AttemptInTask] = [:]
    /// Tasks whose removal ended them, as cancelled (``remove(_:now:effects:)`` prevented or
    /// abandoned them, or ``attemptFailed(_:attempt:error:delay:now:effects:)`` ended one removed
    /// while its body ran): a deliberate act, so neither that end nor the skips it causes is a
    /// failure of the run. Read only when a required task ends without succeeding.
    private var removed: Set<Int32> = []
    /// Reused by every completion for the nodes it makes ready, so ending a task allocates nothing.
    private var readyScratch: [Int32] = []
    /// The run's events, in the order of the transitions that made them: kept under the
    /// run's lock with the rest of its state, so a transition appends a record where it
    /// happens and takes no second lock; readers read it under the same lock
    /// (``GraphRunStorage/batch(from:limit:isolation:)``) and are woken once per transition.
    var journal = JournalBuffer<GraphEventRecord>(keepingNewest: nil)
    /// The rare events whole, by position (`.other(i)` names `rareEvents[i]`).
    private(set) var rareEvents: [GraphEvent] = []

    /// `concurrencyLimit` has been checked by whoever started the run (`TaskGraph.check`):
    /// below 1 it would start nothing, so it is a bug here, not a value to round up.
    init(concurrencyLimit: Int, parallelWorkers: Int) {
        precondition(concurrencyLimit >= 1, "concurrencyLimit \(concurrencyLimit) was not validated")
        self.concurrencyLimit = concurrencyLimit
        self.parallelWorkers = max(0, parallelWorkers)
    }

    var outcome: RunOutcome? {
        if case .finished(let outcome) = phase { return outcome }
        return nil
    }

    private mutating func record(_ event: GraphEvent) {
        journal.append(.other(Int32(truncatingIfNeeded: rareEvents.count)))
        rareEvents.append(event)
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
        now: Int64,
        effects: inout Effects
    ) {
        let first = nodes.count
        let isCompiled = first == 0 && compiled?.count == newDefinitions.count
        if isCompiled, let compiled {
            definitions = newDefinitions
            indexByID = compiled.index
        } else {
            indexByID.reserveCapacity(growingToHold: first + newDefinitions.count)
            for (offset, definition) in newDefinitions.enumerated() {
                indexByID[definition.id] = Int32(first + offset)
            }
            definitions.append(contentsOf: newDefinitions)
        }
        // Grown geometrically: a run that gets a few nodes at a time (a launcher's additions)
        // would otherwise copy them all on every addition, under the run's lock.
        nodes.reserveCapacity(growingToHold: first + newDefinitions.count)
        specs.reserveCapacity(growingToHold: first + newDefinitions.count)
        // A task records that it was queued, started and ended, and the run that it finished:
        // the journal grows once here instead of copying itself at every doubling while the
        // run goes. Without room for the run's last record, that one record alone doubled the
        // journal at the end of every run, copying all the others into freshly faulted pages
        // (22 % of graph.dag's page faults, `perf record -e page-faults`).
        journal.reserveCapacity(forAnother: 3 * newDefinitions.count + (first == 0 ? 1 : 0))
        if isCompiled, let compiled, isRunning {
            insertCompiled(newDefinitions, compiled, now: now, effects: &effects)
            return
        }
        for offset in newDefinitions.indices {
            // Field by field: the definition itself is never copied.
            let spec = newDefinitions[offset].spec
            nodes.append(Node(spec: spec, isHidden: newDefinitions[offset].isHidden))
            specs.append(spec.map(Unmanaged.passUnretained))
            if spec == nil { registerMilestone(of: newDefinitions[offset]) }
        }
        if !results.isEmpty { results.append(contentsOf: repeatElement(nil, count: newDefinitions.count)) }
        if isCompiled, let compiled {
            for node in 0..<compiled.count {
                nodes[node].remaining = compiled.dependencyStart[node + 1] - compiled.dependencyStart[node]
            }
            wireFlat(compiled)
        } else {
            for offset in newDefinitions.indices {
                let index = first + offset
                for id in newDefinitions[offset].requires {
                    wire(Edge(node: indexByID[id]!, requiresSuccess: true), into: index)
                }
                for id in newDefinitions[offset].after {
                    wire(Edge(node: indexByID[id]!, requiresSuccess: false), into: index)
                }
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

    /// The first insertion of a compiled graph into a running machine, in one pass over the
    /// nodes: each node is made with its dependency count, and a task with none is queued on
    /// the spot — into the ready queue's roots, taken by a cursor, not into a lane one by one.
    /// From the first root marker on, roots go through ``release(_:now:effects:)`` instead,
    /// so the events stay in the order of the nodes whatever the kinds.
    private mutating func insertCompiled(
        _ newDefinitions: [NodeDefinition], _ compiled: CompiledGraph, now: Int64, effects: inout Effects
    ) {
        let count = newDefinitions.count
        var roots: [ReadyQueue.Root] = []
        roots.reserveCapacity(count)
        var cascade: [Int32] = []
        var samePriority = true
        // Written in place through unsafe buffers, and each spec read unretained (the
        // definitions hold it): this runs once per node at the start of every run, where
        // appending, a retain and a release per node cost more than making the node.
        var newSpecs = [Unmanaged<TaskSpec>?](repeating: nil, count: count)
        // Not for an empty graph: `Array(unsafeUninitializedCapacity: 0)` writes the count of the
        // standard library's one shared empty array, a write ThreadSanitizer reports as a race
        // when two empty runs start at once.
        var newNodes: [Node] = []
        if count > 0 {
            newNodes = [Node](unsafeUninitializedCapacity: count) { nodeBuffer, initialized in
                newDefinitions.withUnsafeBufferPointer { definitions in
                    compiled.dependencyStart.withUnsafeBufferPointer { dependencyStart in
                        newSpecs.withUnsafeMutableBufferPointer { specBuffer in
                            for offset in 0..<count {
                                let spec = definitions[offset].unretainedSpec
                                var node = Node(unretainedSpec: spec, isHidden: definitions[offset].isHidden)
                                node.remaining = dependencyStart[offset + 1] - dependencyStart[offset]
                                if node.remaining == 0 {
                                    if spec != nil, cascade.isEmpty {
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
                                if spec == nil { registerMilestone(of: definitions[offset]) }
                                (nodeBuffer.baseAddress! + offset).initialize(to: node)
                                specBuffer[offset] = spec
                            }
                        }
                    }
                }
                initialized = count
            }
        }
        // The first insertion: both are empty.
        nodes = newNodes
        specs = newSpecs
        // Each root's `queued`, in node order as the loop found them, in one append: the loop
        // records nothing else, and the cascade's events follow in `release`.
        journal.appendLeavingReaders(contentsOf: roots.lazy.map { .queued(node: $0.node, at: now) })
        wireFlat(compiled)
        if !roots.isEmpty { readyQueue.setRoots(roots, samePriority: samePriority) }
        release(&cascade, now: now, effects: &effects)
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
    }

    private mutating func registerMilestone(of marker: NodeDefinition) {
        guard case .marker(let name?, _) = marker.kind, milestoneOutcomes[name] == nil else { return }
        milestoneOutcomes[name] = AwaitableSettlement()
    }

    /// Wires the first insertion of a compiled graph, whose nodes are `0 ..< compiled.count`,
    /// whose dependency counts are set and none of which has ended: lays the successors out
    /// flat (a counting sort by dependency).
    private mutating func wireFlat(_ compiled: CompiledGraph) {
        let count = compiled.count
        var start = [Int32](repeating: 0, count: count + 1)
        var flat = [Edge](repeating: Edge(node: 0, requiresSuccess: false), count: compiled.dependencies.count)
        // Unsafe buffers: this runs once per node and edge at the start of every run, and
        // the checked subscripts cost more than the work.
        compiled.dependencyStart.withUnsafeBufferPointer { dependencyStart in
            compiled.dependencies.withUnsafeBufferPointer { dependencies in
                start.withUnsafeMutableBufferPointer { start in
                    nodes.withUnsafeMutableBufferPointer { nodes in
                        for edge in dependencies {
                            start[Int(edge.node) + 1] += 1
                            nodes[Int(edge.node)].flags.insert(.hasSuccessors)
                        }
                    }
                    for node in 0..<count { start[node + 1] += start[node] }
                }
                var next = start
                next.withUnsafeMutableBufferPointer { next in
                    flat.withUnsafeMutableBufferPointer { flat in
                        for node in 0..<count {
                            for position in Int(dependencyStart[node])..<Int(dependencyStart[node + 1]) {
                                let edge = dependencies[position]
                                let dependency = Int(edge.node)
                                flat[Int(next[dependency])] = Edge(
                                    node: Int32(node), requiresSuccess: edge.requiresSuccess)
                                next[dependency] += 1
                            }
                        }
                    }
                }
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
            if edge.requiresSuccess, nodes[node].blockedBy < 0, nodes[dependency].ending != .succeeded {
                nodes[node].blockedBy = edge.node
            }
            let last = nodes[node].lastDependency
            if last < 0 || nodes[dependency].endedAt >= nodes[Int(last)].endedAt {
                nodes[node].lastDependency = edge.node
            }
        } else {
            nodes[node].remaining += 1
            nodes[dependency].flags.insert(.hasSuccessors)
            let successor = Edge(node: Int32(node), requiresSuccess: edge.requiresSuccess)
            addedSuccessors[edge.node, default: []].append(successor)
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
    ///
    /// Workers start inline — on the driver's thread, until their task first suspends — so a
    /// run of short bodies is one worker on one core: handing tasks between cores costs a
    /// cache-line transfer per task under the run's lock, more than a no-op body (see
    /// docs/ARCHITECTURE.md, "Workers and cores"). A helper on a thread of its own starts once
    /// the bodies are long enough to be worth sharing (``helperWanted``).
    mutating func nextForDriver(now: Int64) -> DriverAction {
        if driverMustCancelAll {
            driverMustCancelAll = false
            return .cancelAll
        }
        if isFinished { return .finish }
        if let assignment = takeNext(now: now) {
            liveWorkers += 1
            if helperWanted, liveHelpers < parallelWorkers {
                helperWanted = false
                liveHelpers += 1
                return .spawn(assignment, inline: false)
            }
            return .spawn(assignment, inline: true)
        }
        helperWanted = false
        return .wait
    }

    /// Parks the driver; returns `false` (and keeps nothing) if there is already work for it.
    mutating func park(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard !hasDriverWork else { return false }
        driver = ParkedDriver(continuation)
        return true
    }

    private var hasDriverWork: Bool {
        if driverMustCancelAll || isFinished { return true }
        // `helperWanted` only ever comes with a task in the ready queue: the driver starts
        // it in the helper.
        if isRunning { return !readyQueue.isEmpty && running < concurrencyLimit }
        return false
    }

    private mutating func wakeDriverIfNeeded(_ effects: inout Effects) {
        guard driver != nil, hasDriverWork else { return }
        effects.resumeDriver = driver
        driver = nil
    }

    // MARK: - Workers

    /// Records the end of `node` and hands the worker its next task, if any.
    ///
    /// `startedAt` is when the worker called the body (`Node.never` if it never did), and
    /// `now` when the body returned: both read outside the lock, so the report shows the
    /// body's own run time, not the wait for this transition. `takeNext` stamped the start
    /// when the task was handed out; that stays for a task that ended meanwhile (removed, or
    /// the run stopped), whose end was recorded then.
    ///
    /// `helper` says whether the worker runs on a thread of its own (the driver started it
    /// with `inline: false`). An inline worker whose bodies have been long
    /// (``helperThreshold``, twice in a row) while tasks wait gets no next task: it ends, and
    /// the driver — on whose thread it may be running — starts the waiting task in a helper
    /// and the next one inline, so the run spreads over two cores only when the bodies pay
    /// for the hand-over. A helper retires the same way once bodies have been short
    /// ``helperRetiresAfter`` times in a row while another worker is alive.
    @inline(__always)
    mutating func complete(
        _ node: Int,
        outcome: TaskOutcome,
        startedAt: Int64,
        now: Int64,
        helper: Bool = false,
        effects: inout Effects
    ) -> Assignment? {
        // A task removed while it backed off gave its slot back at the removal (`remove`): only
        // a removal ends a task between its attempts, before its worker wakes to record it.
        let slotGivenBack = nodes[node].phase == .ended && nodes[node].flags.contains(.backingOff)
        if !slotGivenBack { running -= 1 }
        if !attemptsInTasks.isEmpty { attemptsInTasks[node] = nil }
        if nodes[node].phase != .ended {
            if case .succeeded = outcome {
                endSucceeded(node, startedAt: startedAt, now: now, effects: &effects)
            } else {
                if startedAt != Node.never { nodes[node].startedAt = startedAt }
                end(node, outcome: outcome, now: now, effects: &effects)
            }
        }
        if startedAt != Node.never, now &- startedAt >= Self.helperThreshold {
            longBodies += 1
            shortBodies = 0
        } else {
            longBodies = 0
            shortBodies += 1
        }
        let next: Assignment?
        if !helper, longBodies >= 2, liveHelpers < parallelWorkers, isRunning, !readyQueue.isEmpty,
            running < concurrencyLimit
        {
            helperWanted = true
            longBodies = 0
            next = nil
        } else if helper, shortBodies >= Self.helperRetiresAfter, liveWorkers > 1 {
            // The bodies got short again: the run goes back to the workers it had, and a
            // parked driver starts an inline one if tasks wait (`wakeDriverIfNeeded`).
            shortBodies = 0
            next = nil
        } else {
            next = takeNext(now: now)
        }
        if next == nil {
            liveWorkers -= 1
            if helper { liveHelpers -= 1 }
        }
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return next
    }

    /// How long a body must run, in nanoseconds, for a second core to pay. Handing tasks
    /// between cores costs a cache-line transfer or two under the run's lock per task (64–230
    /// ns each on the two vCPUs measured): no-op bodies (a few tens of nanoseconds between the
    /// worker's clock reads) ran slower on two cores than on one, 1 µs bodies 1.66× faster
    /// (Benchmarks/README.md, the scaling table). Half a microsecond lies between.
    static let helperThreshold: Int64 = 500

    /// How many short bodies in a row make a helper retire while another worker is alive:
    /// enough that bodies around the threshold do not start and end a helper task every few
    /// tasks.
    static let helperRetiresAfter = 64

    /// Keeps the result of a task that succeeded, for dependents to read, unless it returns
    /// nothing or has ended already (removed, or its run stopped, while its body ran). Call it
    /// just before ``complete(_:outcome:startedAt:now:effects:)``.
    mutating func keep(_ result: any Sendable, of node: Int) {
        guard nodes[node].phase != .ended, !nodes[node].flags.contains(.returnsVoid) else { return }
        if results.isEmpty { results = Array(repeating: nil, count: nodes.count) }
        results[node] = result
    }

    /// The backoff of `node` is over: the next attempt starts only if the run is still
    /// running and the task was not removed meanwhile — the one place a retry wins the right
    /// to start, so nothing starts after a stop. Returns whether it starts; a task whose body
    /// runs in a task of its own has its attempt registered then.
    mutating func retryStarting(_ node: Int, attempt: Int, now: Int64) -> Bool {
        guard isRunning, nodes[node].phase == .running else { return false }
        nodes[node].flags.remove(.backingOff)
        nodes[node].attempts = Int32(clamping: attempt)
        journal.append(.started(node: Int32(node), attempt: Int32(clamping: attempt), at: now))
        if let spec = specs[node], spec._withUnsafeGuaranteedRef({ $0.runsDetached }) {
            attemptsInTasks[node] = AttemptInTask(number: Int32(clamping: attempt))
        }
        return true
    }

    /// Attempt `attempt` of `node` failed and another may follow after `delay`. Returns
    /// `false`, recording nothing, when none will: the run has stopped, or the task was
    /// removed — once the failed attempt had settled (it ended then, as cancelled), or while
    /// its body ran on a worker (it ends now, as cancelled).
    mutating func attemptFailed(
        _ node: Int, attempt: Int, error: any Error, delay: Duration, now: Int64, effects: inout Effects
    ) -> Bool {
        attemptsInTasks[node] = nil
        guard isRunning, nodes[node].phase == .running else { return false }
        if nodes[node].flags.contains(.removedWhileRunning) {
            removed.insert(Int32(node))
            end(node, outcome: .cancelled, now: now, effects: &effects)
            wakeDriverIfNeeded(&effects)
            finishIfDone(now: now, effects: &effects)
            return false
        }
        nodes[node].flags.insert(.backingOff)
        record(.taskRetried(definitions[node].id, attempt: attempt, error: error, delay: delay, at: .nanoseconds(now)))
        return true
    }

    // MARK: - Attempts in tasks of their own

    enum AttemptClaim {
        /// The worker may create the body's task.
        case claimed
        /// Abandoned before the body started, which it now never does.
        case settled(AttemptInTask.Result)
    }

    /// The worker claims the right to start attempt `number` of `node`'s body.
    mutating func claimAttempt(_ node: Int, number: Int) -> AttemptClaim {
        guard var attempt = attemptsInTasks[node], attempt.number == number else { return .settled(.cancelled) }
        defer { attemptsInTasks[node] = attempt }
        if attempt.claim() { return .claimed }
        return .settled(attempt.result ?? .cancelled)
    }

    /// Keeps the task of an attempt's body; `false` when the attempt has settled meanwhile
    /// (or is gone), and the caller cancels the task.
    mutating func attachAttemptBody(_ task: Task<Void, Never>, of node: Int, number: Int) -> Bool {
        guard var attempt = attemptsInTasks[node], attempt.number == number else { return false }
        defer { attemptsInTasks[node] = attempt }
        return attempt.attach(task)
    }

    /// Whether attempt `number` of `node` is still unsettled: its body's task asks before the
    /// body starts, so an attempt that timed out or was abandoned before the task got a thread
    /// does not start late.
    func attemptIsOpen(_ node: Int, number: Int) -> Bool {
        guard let attempt = attemptsInTasks[node], attempt.number == number else { return false }
        return !attempt.isSettled
    }

    /// Settles attempt `number` of `node` with `result` (its body's, or its timeout's) unless
    /// something settled it first; returns the waiting worker to resume.
    mutating func settleAttempt(_ node: Int, number: Int, with result: AttemptInTask.Result) -> WaiterSet<Void>.Waiter?
    {
        guard var attempt = attemptsInTasks[node], attempt.number == number else { return nil }
        defer { attemptsInTasks[node] = attempt }
        return attempt.settle(result).worker
    }

    /// The worker waits for attempt `number` of `node` to settle, or has its result at once.
    mutating func awaitAttempt(_ node: Int, number: Int, _ waiter: WaiterSet<Void>.Waiter)
        -> SuspensionDecision<Void, Void>
    {
        guard var attempt = attemptsInTasks[node], attempt.number == number else { return .resume((), ()) }
        defer { attemptsInTasks[node] = attempt }
        return attempt.register(waiter)
    }

    /// How attempt `number` of `node` settled (`cancelled` if it is gone).
    func attemptResult(_ node: Int, number: Int) -> AttemptInTask.Result {
        guard let attempt = attemptsInTasks[node], attempt.number == number else { return .cancelled }
        return attempt.result ?? .cancelled
    }

    /// Settles `node`'s attempt as cancelled, if one is in flight and unsettled.
    private mutating func abandonAttempt(of node: Int, effects: inout Effects) -> Bool {
        guard var attempt = attemptsInTasks[node] else { return false }
        let (settled, worker) = attempt.settle(.cancelled)
        guard settled else { return false }
        attemptsInTasks[node] = attempt
        effects.abandoned(body: attempt.body, worker: worker)
        return true
    }

    private mutating func takeNext(now: Int64) -> Assignment? {
        guard isRunning, running < concurrencyLimit else { return nil }
        while let entry = readyQueue.popFirst() {
            let index = Int(entry)
            guard nodes[index].phase == .ready, let spec = specs[index] else { continue }
            let runsDetached = spec._withUnsafeGuaranteedRef { $0.runsDetached }
            nodes[index].phase = .running
            nodes[index].startedAt = now
            nodes[index].attempts = 1
            running += 1
            journal.append(.started(node: entry, attempt: 1, at: now))
            if runsDetached { attemptsInTasks[index] = AttemptInTask(number: 1) }
            return Assignment(node: index, spec: spec.takeUnretainedValue())
        }
        return nil
    }

    // MARK: - Stopping

    /// Cancels the run: pending tasks end as cancelled, running ones are told to stop.
    mutating func cancel(now: Int64, effects: inout Effects) {
        stop(.cancelled, now: now, effects: &effects)
        finishIfDone(now: now, effects: &effects)
    }

    /// Removes a task that has not ended; `nil` if no task is called `id`.
    ///
    /// - A task that has not won the right to start, or waits between attempts, ends as
    ///   cancelled here and never runs again (`prevented`).
    /// - An attempt in a task of its own that has not settled is settled as cancelled and its
    ///   body cancelled (`abandoned`); its worker records the end. One that settled with a
    ///   failure its worker has not recorded yet, with attempts left, ends here as cancelled:
    ///   the next attempt is prevented. One that settled otherwise has ended (`alreadyEnded`).
    /// - A body running on a worker cannot be stopped and is left to end (`stillRunning`).
    ///
    /// Only a task the removal ends goes into `removed`; a body left running ends the task
    /// with what it does, and is excused only if the removal prevents its next attempt.
    mutating func remove(_ id: String, now: Int64, effects: inout Effects) -> TaskRemoval? {
        guard let index = indexByID[id].map(Int.init), !definitions[index].isHidden else { return nil }
        switch nodes[index].phase {
        case .ended:
            return .alreadyEnded
        case .running:
            if let attempt = attemptsInTasks[index] {
                if abandonAttempt(of: index, effects: &effects) {
                    // Settled as cancelled: its worker ends it so.
                    removed.insert(Int32(index))
                    return .abandoned
                }
                guard mayRetry(index, after: attempt.result) else { return .alreadyEnded }
            } else if !nodes[index].flags.contains(.backingOff) {
                // The body cannot be stopped; no attempt follows it (`attemptFailed`).
                nodes[index].flags.insert(.removedWhileRunning)
                return .stillRunning
            } else {
                // Its worker sleeps out the backoff and records the end only when it wakes:
                // the slot goes to the next ready task now, not then (`complete`).
                running -= 1
            }
        case .waiting, .ready:
            break
        }
        removed.insert(Int32(index))
        end(index, outcome: .cancelled, now: now, effects: &effects)
        wakeDriverIfNeeded(&effects)
        finishIfDone(now: now, effects: &effects)
        return .prevented
    }

    /// Whether a task whose attempt settled with `result` will try again: it failed or timed
    /// out, and attempts are left.
    private func mayRetry(_ node: Int, after result: AttemptInTask.Result?) -> Bool {
        switch result {
        case .failure, .timedOut:
            guard let spec = specs[node] else { return false }
            return Int(nodes[node].attempts) < spec._withUnsafeGuaranteedRef { $0.retry.maxAttempts }
        case .success, .cancelled, nil:
            return false
        }
    }

    private mutating func stop(_ outcome: RunOutcome, now: Int64, effects: inout Effects) {
        guard isRunning else { return }
        phase = .stopping(outcome)
        readyQueue.removeAll()
        for index in nodes.indices where nodes[index].phase == .waiting || nodes[index].phase == .ready {
            endQuietly(index, outcome: .cancelled, now: now)
        }
        for node in attemptsInTasks.keys { _ = abandonAttempt(of: node, effects: &effects) }
        driverMustCancelAll = true
        wakeDriverIfNeeded(&effects)
    }

    // MARK: - Ending nodes

    /// Ends a node and lets its successors go, cascading through markers and skips.
    private mutating func end(_ index: Int, outcome: TaskOutcome, now: Int64, effects: inout Effects) {
        endQuietly(index, outcome: outcome, now: now)
        if nodes[index].flags.contains(.failureIsRequired), isRunning {
            switch outcome {
            case .failed(let error):
                stop(.failed(.taskFailed(definitions[index].id, error)), now: now, effects: &effects)
                return
            case .timedOut(let after):
                stop(.failed(.timedOut(definitions[index].id, after: after)), now: now, effects: &effects)
                return
            case .cancelled where !removed.contains(Int32(index)):
                // Neither removed nor stopped: its own body threw `CancellationError`.
                stop(.failed(.taskCancelled(definitions[index].id)), now: now, effects: &effects)
                return
            default:
                break
            }
        }
        // Most tasks of a wide graph have no successors: they touch no scratch list at all.
        guard nodes[index].flags.contains(.hasSuccessors) else { return }
        releaseSuccessors(of: index, now: now, effects: &effects)
    }

    /// Counts `index`'s end down in its successors and moves those it makes ready on
    /// (``release(_:now:effects:)``); with `from`, the successors of its flat table from that
    /// position on, and those later additions wired to it.
    private mutating func releaseSuccessors(
        of index: Int, from position: Int? = nil, now: Int64, effects: inout Effects
    ) {
        var ready = readyScratch
        readyScratch = []
        appendSuccessorsMadeReady(by: index, from: position, to: &ready)
        if !ready.isEmpty {
            release(&ready, now: now, effects: &effects)
            // `removeAll(keepingCapacity:)` goes through a generic `replaceSubrange`.
            while !ready.isEmpty { ready.removeLast() }
        }
        readyScratch = ready
    }

    /// ``end(_:outcome:now:effects:)`` for the common case, a body that returned: no outcome
    /// to keep, no failure policy to apply.
    private mutating func endSucceeded(_ index: Int, startedAt: Int64, now: Int64, effects: inout Effects) {
        // The node's writes through one buffer: one uniqueness check of `nodes` for them all.
        let flags = nodes.withUnsafeMutableBufferPointer { nodes in
            if startedAt != Node.never { nodes[index].startedAt = startedAt }
            nodes[index].phase = .ended
            nodes[index].endedAt = now
            nodes[index].ending = .succeeded
            return nodes[index].flags
        }
        ended += 1
        if flags.contains(.isReported) { journal.append(.succeeded(node: Int32(index), at: now)) }
        guard flags.contains(.hasSuccessors) else { return }
        releaseSuccessorsOfSucceeded(index, now: now, effects: &effects)
    }

    /// ``releaseSuccessors(of:from:now:effects:)`` for a task that succeeded while the run goes
    /// on, a DAG's common case: one pass over its flat successor table that queues each task it
    /// makes ready on the spot, instead of gathering them in a list for
    /// ``release(_:now:effects:)`` first (a list written and read back per node). At the first
    /// successor this would make ready that needs more — a marker, a task a failed dependency
    /// blocks — it hands that successor and the rest to the general path, whose cascade goes
    /// after them, so the events come in the same order either way.
    private mutating func releaseSuccessorsOfSucceeded(_ index: Int, now: Int64, effects: inout Effects) {
        guard isRunning, index + 1 < firstSuccessorStart.count else {
            return releaseSuccessors(of: index, now: now, effects: &effects)
        }
        let end = Int(firstSuccessorStart[index + 1])
        var position = Int(firstSuccessorStart[index])
        // The edges by subscript, not through a buffer: a buffer of `firstSuccessors` held
        // while `self` is written is retained and released around the loop, once a node.
        nodes.withUnsafeMutableBufferPointer { nodes in
            while position < end {
                let successor = Int(firstSuccessors[position].node)
                if nodes[successor].phase == .waiting {
                    if nodes[successor].remaining == 1 {
                        guard nodes[successor].isTask, nodes[successor].blockedBy < 0 else { return }
                        nodes[successor].phase = .ready
                        nodes[successor].queuedAt = now
                        journal.append(.queued(node: Int32(successor), at: now))
                        readyQueue.append(Int32(successor), priority: nodes[successor].priorityRank)
                    }
                    nodes[successor].lastDependency = Int32(index)
                    nodes[successor].remaining -= 1
                }
                position += 1
            }
        }
        if position < end || (!addedSuccessors.isEmpty && addedSuccessors[Int32(index)] != nil) {
            releaseSuccessors(of: index, from: position, now: now, effects: &effects)
        }
    }

    private mutating func endQuietly(_ index: Int, outcome: TaskOutcome, now: Int64) {
        nodes[index].phase = .ended
        nodes[index].endedAt = now
        ended += 1
        let isReported = nodes[index].flags.contains(.isReported)
        switch outcome {
        case .succeeded:
            nodes[index].ending = .succeeded
            if isReported { journal.append(.succeeded(node: Int32(index), at: now)) }
        case .cancelled:
            nodes[index].ending = .cancelled
            if isReported { journal.append(.cancelled(node: Int32(index), at: now)) }
        case .failed(let error):
            nodes[index].ending = .failed
            endings[Int32(index)] = outcome
            if isReported { record(.taskFailed(definitions[index].id, error: error, at: .nanoseconds(now))) }
        case .timedOut:
            nodes[index].ending = .timedOut
            endings[Int32(index)] = outcome
            if isReported { record(.taskTimedOut(definitions[index].id, at: .nanoseconds(now))) }
        case .skipped(let dependency):
            nodes[index].ending = .skipped
            endings[Int32(index)] = outcome
            if isReported {
                record(.taskSkipped(definitions[index].id, dependency: dependency, at: .nanoseconds(now)))
            }
        }
    }

    private mutating func appendSuccessorsMadeReady(by index: Int, from position: Int? = nil, to ready: inout [Int32]) {
        let succeeded = nodes[index].ending == .succeeded
        if index + 1 < firstSuccessorStart.count {
            let range = (position ?? Int(firstSuccessorStart[index]))..<Int(firstSuccessorStart[index + 1])
            if !range.isEmpty {
                // One uniqueness check for the loop, not one per field of every successor.
                firstSuccessors.withUnsafeBufferPointer { edges in
                    nodes.withUnsafeMutableBufferPointer { nodes in
                        for position in range {
                            Self.release(edges[position], from: index, succeeded: succeeded, in: nodes, to: &ready)
                        }
                    }
                }
            }
        }
        if !addedSuccessors.isEmpty, let added = addedSuccessors[Int32(index)] {
            nodes.withUnsafeMutableBufferPointer { nodes in
                for edge in added { Self.release(edge, from: index, succeeded: succeeded, in: nodes, to: &ready) }
            }
        }
    }

    private static func release(
        _ edge: Edge, from index: Int, succeeded: Bool, in nodes: UnsafeMutableBufferPointer<Node>,
        to ready: inout [Int32]
    ) {
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
    private mutating func release(_ work: inout [Int32], now: Int64, effects: inout Effects) {
        var cursor = 0
        while cursor < work.count {
            let next = work[cursor]
            cursor += 1
            let index = Int(next)
            // Read once and written back once: one uniqueness check of `nodes`, not one a field.
            var node = nodes[index]
            guard node.phase == .waiting, isRunning else { continue }
            if node.isTask {
                if node.blockedBy >= 0, !node.flags.contains(.runsAnywayAfterFailure) {
                    let dependency = definitions[Int(node.blockedBy)].id
                    endQuietly(index, outcome: .skipped(dependency: dependency), now: now)
                    // A required task that cannot run fails the run, like its failure would,
                    // unless a removal is what it lacks.
                    if node.flags.contains(.failureIsRequired), !lacksOnlyRemoved(index) {
                        stop(
                            .failed(.taskSkipped(definitions[index].id, dependency: dependency)), now: now,
                            effects: &effects)
                        continue
                    }
                    appendSuccessorsMadeReady(by: index, to: &work)
                } else {
                    node.phase = .ready
                    node.queuedAt = now
                    nodes[index] = node
                    journal.append(.queued(node: next, at: now))
                    readyQueue.append(next, priority: node.priorityRank)
                }
                continue
            }
            guard case .marker(let milestone, let startsStage) = definitions[index].kind else { continue }
            endQuietly(index, outcome: .succeeded, now: now)
            let at = Duration.nanoseconds(now)
            if let startsStage { record(.stageStarted(startsStage, at: at)) }
            if let milestone {
                record(.milestoneReached(milestone, at: at))
                milestonesReached.append((milestone, at))
                effects.reached(milestone, at: at)
                if let waiters = milestoneOutcomes[milestone]?.settle(.success(at)) { effects.resume(waiters) }
            }
            appendSuccessorsMadeReady(by: index, to: &work)
        }
    }

    /// Whether skipped `index` lacks a removed task: the dependency it names was ended by its
    /// removal (cancelled), or was itself skipped for lack of a removed one.
    private func lacksOnlyRemoved(_ index: Int) -> Bool {
        var cursor = index
        while !removed.isEmpty {
            if removed.contains(Int32(cursor)) { return nodes[cursor].ending == .cancelled }
            guard nodes[cursor].ending == .skipped, nodes[cursor].blockedBy >= 0 else { return false }
            cursor = Int(nodes[cursor].blockedBy)
        }
        return false
    }

    /// Inlined: every transition asks, and almost always the answer is no.
    @inline(__always)
    private mutating func finishIfDone(now: Int64, effects: inout Effects) {
        guard ended == nodes.count, !isFinished else { return }
        finish(now: now, effects: &effects)
    }

    @inline(never)
    private mutating func finish(now: Int64, effects: inout Effects) {
        let outcome: RunOutcome
        switch phase {
        case .running: outcome = .completed
        case .stopping(let reason): outcome = reason
        case .finished: return
        }
        phase = .finished(outcome)
        finishedAt = now
        record(.runFinished(outcome, at: .nanoseconds(now)))
        journal.finishLeavingReaders()
        // Milestones not reached by now never will be.
        for name in milestoneOutcomes.keys {
            if let waiters = milestoneOutcomes[name]?.settle(.failure(.milestoneMissed(name))) {
                effects.resume(waiters)
            }
        }
        if let driver {
            effects.resumeDriver = driver
            self.driver = nil
        }
    }

    // MARK: - Milestones

    /// The outcome of milestone `name`: `nil` if the run has no such milestone, `.some(nil)`
    /// while it is neither reached nor missed.
    func milestoneOutcome(_ name: String) -> Result<Duration, GraphError>?? {
        guard let settlement = milestoneOutcomes[name] else { return nil }
        return .some(settlement.outcome)
    }

    /// A task waits for milestone `name`, or has its outcome at once (also when the run has
    /// no such milestone: the caller asked first).
    mutating func awaitMilestone(_ name: String, _ waiter: WaiterSet<Void>.Waiter) -> SuspensionDecision<Void, Void> {
        guard milestoneOutcomes[name] != nil else { return .resume((), ()) }
        return milestoneOutcomes[name]!.register(waiter)
    }

    /// Takes out waiter `id` of milestone `name` (its task was cancelled).
    mutating func removeMilestoneWaiter(_ name: String, id: UInt64) -> WaiterSet<Void>.Waiter? {
        milestoneOutcomes[name]?.remove(id)
    }

    // MARK: - Reading

    func id(of node: Int) -> String { definitions[node].id }

    /// How `node` ended (`cancelled` if it has not), given its entry in `endings`.
    private static func outcome(of node: Node, _ ending: TaskOutcome?) -> TaskOutcome {
        switch node.ending {
        case .succeeded: .succeeded
        case .none, .cancelled: .cancelled
        case .failed, .timedOut, .skipped: ending ?? .cancelled
        }
    }

    func result(of id: String) -> (any Sendable)? {
        guard let index = indexByID[id].map(Int.init) else { return nil }
        guard nodes[index].phase == .ended, nodes[index].ending == .succeeded else { return nil }
        if results.isEmpty { return () }
        return results[index] ?? ()
    }

    /// The report of a finished run. Its task records are made from a copy of the final
    /// state only if someone reads them.
    func makeReport() -> RunReport {
        var last = -1
        if case .failed(let error)? = outcome, let id = error.taskID, let failing = self.indexByID[id] {
            // A failed run ends at the required task that ended it, whatever ended later (an
            // optional task's body still running, tasks cancelled by the stop).
            last = Int(failing)
        } else {
            for index in nodes.indices where last < 0 || nodes[index].endedAt >= nodes[last].endedAt {
                // Ties go to the later node: a dependent ends no earlier than its dependencies.
                last = index
            }
        }
        var path: [String] = []
        var cursor = last
        while cursor >= 0 {
            let node = nodes[cursor]
            if node.flags.contains(.isReported), node.startedAt != Node.never { path.append(definitions[cursor].id) }
            cursor = Int(node.lastDependency)
        }
        let (nodes, specs, definitions, indexByID, endings) = (nodes, specs, definitions, indexByID, endings)
        return RunReport(
            outcome: outcome ?? .cancelled,
            records: TaskRecords {
                Self.taskRecords(
                    nodes: nodes, specs: specs, definitions: definitions, indexByID: indexByID, endings: endings)
            },
            milestones: milestonesReached,
            duration: .nanoseconds(finishedAt),
            criticalPath: path.reversed()
        )
    }

    private static func taskRecords(
        nodes: [Node], specs: [Unmanaged<TaskSpec>?], definitions: [NodeDefinition], indexByID: [String: Int32],
        endings: [Int32: TaskOutcome]
    ) -> [TaskRecord] {
        var records: [TaskRecord] = []
        records.reserveCapacity(nodes.count)
        for index in nodes.indices {
            let node = nodes[index]
            // `definitions`, captured with `specs`, holds the spec.
            guard node.flags.contains(.isReported), let spec = specs[index]?.takeUnretainedValue() else { continue }
            var dependencies = definitions[index].requires
            for id in definitions[index].after where indexByID[id].map({ !definitions[Int($0)].isHidden }) ?? false {
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
                    attempts: Int(node.attempts),
                    placement: spec.placement
                )
            )
        }
        return records
    }
}

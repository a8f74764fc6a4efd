import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Applies the state machine's transitions under one lock and runs the work they call for.
///
/// One driver task owns a discarding task group and starts workers; a worker runs a task,
/// records its end, and goes straight on with the next ready task, so a chain of tasks costs
/// one lock per task and no task creation. Workers beyond the number of cores start inline
/// on the driver's thread and hand control back the moment their task suspends, which keeps
/// waiting work parallel without paying a thread hop for work that never waits.
final class GraphRunStorage: Sendable {
    typealias MilestoneCell = OnceCell<Result<Duration, GraphError>>

    private let state: Lock<GraphStateMachine>
    let journal: EventJournal<GraphEvent>
    let clock: ClockSource
    private let milestones: Lock<[String: MilestoneCell]>
    let reportCell = OnceCell<RunReport>()

    convenience init(
        definitions: [NodeDefinition],
        compiled: CompiledGraph? = nil,
        concurrencyLimit: Int?,
        clock: ClockSource
    ) {
        self.init(concurrencyLimit: concurrencyLimit, clock: clock, journal: EventJournal(retention: .everything))
        var effects = GraphStateMachine.Effects()
        transition { machine in machine.insert(definitions, compiled: compiled, now: .zero, effects: &effects) }
        registerMilestones(of: definitions)
        apply(effects)
    }

    /// A run with no nodes yet, writing into `journal`: a launcher makes its journal before
    /// its launch exists, and adds the first nodes with ``addLeavingWakeups(_:)`` under its
    /// own lock. Until something is added, the run neither starts nor finishes.
    init(concurrencyLimit: Int?, clock: ClockSource, journal: EventJournal<GraphEvent>) {
        self.clock = clock
        self.journal = journal
        let cores = ProcessInfo.processInfo.activeProcessorCount
        self.state = Lock(
            GraphStateMachine(concurrencyLimit: concurrencyLimit ?? .max, parallelWorkers: max(1, cores - 1))
        )
        self.milestones = Lock([:])
    }

    private func registerMilestones(of definitions: [NodeDefinition]) {
        let names = definitions.compactMap { definition -> String? in
            if case .marker(let name?, _) = definition.kind { return name }
            return nil
        }
        guard !names.isEmpty else { return }
        milestones.withLock { cells in
            for name in names where cells[name] == nil { cells[name] = MilestoneCell() }
        }
    }

    // MARK: - Transitions

    /// Runs `body` under the lock and moves the events it produced into the journal, in
    /// order; readers are woken after the lock is released.
    @discardableResult
    private func transition<Value, Failure: Error>(
        _ body: (inout GraphStateMachine) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let (value, wakeup) = try transitionLeavingWakeup(body)
        wakeup.resume()
        return value
    }

    private func transitionLeavingWakeup<Value, Failure: Error>(
        _ body: (inout GraphStateMachine) throws(Failure) -> Value
    ) throws(Failure) -> (Value, EventJournal<GraphEvent>.Wakeup) {
        try state.withLock {
            (machine) throws(Failure) in
            let value = try body(&machine)
            guard !machine.outbox.isEmpty else { return (value, .none) }
            let wakeup = journal.append(contentsOf: machine.outbox)
            machine.outbox.removeAll(keepingCapacity: true)
            return (value, wakeup)
        }
    }

    private func apply(_ effects: GraphStateMachine.Effects) {
        effects.resumeDriver?.resume()
        for abandon in effects.abandonDetached { abandon() }
        if !effects.reachedMilestones.isEmpty {
            let cells = milestones.withLock { $0 }
            for (name, time) in effects.reachedMilestones { cells[name]?.resolve(.success(time)) }
        }
        if effects.finished {
            journal.finish().resume()
            let cells = milestones.withLock { $0 }
            for (name, cell) in cells { cell.resolve(.failure(.milestoneMissed(name))) }
        }
    }

    // MARK: - Driving

    /// Runs the graph to its end in the calling task; cancelling that task cancels the run.
    func drive() async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                while true {
                    let now = clock.now
                    let action = transition { machine in machine.nextForDriver(now: now) }
                    switch action {
                    case .spawn(let assignment, let inline):
                        if inline, #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                            group.addImmediateTask { await self.work(assignment) }
                        } else {
                            group.addTask { await self.work(assignment) }
                        }
                    case .cancelAll:
                        group.cancelAll()
                    case .wait:
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            if !state.withLock({ $0.park(continuation) }) { continuation.resume() }
                        }
                    case .finish:
                        return
                    }
                }
            }
        } onCancel: {
            cancel()
        }
        reportCell.resolve(makeReport())
    }

    private func work(_ first: GraphStateMachine.Assignment) async {
        var assignment = first
        while true {
            let (outcome, result) = await execute(assignment)
            let now = clock.now
            var effects = GraphStateMachine.Effects()
            let next = transition { machine in
                machine.complete(assignment.node, outcome: outcome, result: result, now: now, effects: &effects)
            }
            apply(effects)
            guard let next else { return }
            assignment = next
        }
    }

    // MARK: - Running one task

    private enum AttemptResult: Sendable {
        case success(any Sendable)
        case failure(any Error)
        case timedOut(Duration)
        case cancelled
    }

    private func execute(_ assignment: GraphStateMachine.Assignment) async -> (TaskOutcome, (any Sendable)?) {
        let retry = assignment.spec.retry
        var attempt = 1
        while true {
            let outcome: TaskOutcome
            switch await runAttempt(assignment, attempt: attempt) {
            case .success(let value): return (.succeeded, value)
            case .cancelled: return (.cancelled, nil)
            case .failure(let error): outcome = .failed(error)
            case .timedOut(let duration): outcome = .timedOut(after: duration)
            }
            if Task.isCancelled { return (.cancelled, nil) }
            guard attempt < retry.maxAttempts else { return (outcome, nil) }
            let delay = retry.backoff(after: attempt)
            let error: any Error =
                switch outcome {
                case .failed(let error): error
                default: GraphError.timedOut(assignment.id, after: assignment.spec.timeout ?? .zero)
                }
            let failedAttempt = attempt
            let now = clock.now
            transition {
                $0.attemptFailed(assignment.node, attempt: failedAttempt, error: error, delay: delay, now: now)
            }
            do {
                try await clock.sleep(for: delay)
            } catch {
                return (.cancelled, nil)
            }
            attempt += 1
            let nextAttempt = attempt
            let restart = clock.now
            transition { $0.attemptStarting(assignment.node, attempt: nextAttempt, now: restart) }
        }
    }

    private func runAttempt(_ assignment: GraphStateMachine.Assignment, attempt: Int) async -> AttemptResult {
        let context = TaskContext(id: assignment.id, attempt: attempt, storage: self)
        let operation = assignment.spec.operation
        guard assignment.spec.runsDetached else {
            do {
                return .success(try await Self.invoke(operation, context))
            } catch is CancellationError {
                return .cancelled
            } catch {
                return Task.isCancelled ? .cancelled : .failure(error)
            }
        }
        // A task of its own, raced against the timeout: whichever settles the cell first wins,
        // and the worker moves on without waiting for an operation that ignores cancellation.
        let cell = OnceCell<AttemptResult>()
        let work = Task {
            do {
                cell.resolve(.success(try await Self.invoke(operation, context)))
            } catch is CancellationError {
                cell.resolve(.cancelled)
            } catch {
                cell.resolve(.failure(error))
            }
        }
        let abandon: @Sendable () -> Void = {
            work.cancel()
            cell.resolve(.cancelled)
        }
        if !state.withLock({ $0.registerDetached(assignment.node, abandon: abandon) }) { abandon() }
        var timer: Task<Void, Never>?
        if let timeout = assignment.spec.timeout {
            let clock = self.clock
            timer = Task {
                guard (try? await clock.sleep(for: timeout)) != nil else { return }
                cell.resolve(.timedOut(timeout))
            }
        }
        let result = await cell.wait() ?? .cancelled
        work.cancel()
        timer?.cancel()
        return result
    }

    private static func invoke(_ operation: TaskSpec.Operation, _ context: TaskContext) async throws -> any Sendable {
        switch operation {
        case .global(let body): try await body(context)
        case .mainActor(let body): try await body(context)
        }
    }

    // MARK: - Outside requests

    func cancel() {
        let now = clock.now
        var effects = GraphStateMachine.Effects()
        transition { $0.cancel(now: now, effects: &effects) }
        apply(effects)
    }

    func add(_ definitions: [NodeDefinition]) throws(GraphError) {
        try addLeavingWakeups(definitions).perform()
    }

    /// What an addition leaves to do (wake readers, the driver, milestone waiters) once the
    /// caller has released a lock of its own.
    struct PendingWakeups: Sendable {
        fileprivate let storage: GraphRunStorage
        fileprivate let wakeup: EventJournal<GraphEvent>.Wakeup
        fileprivate let effects: GraphStateMachine.Effects

        func perform() {
            wakeup.resume()
            storage.apply(effects)
        }
    }

    /// Adds definitions but leaves the wakeups to the caller, so a caller that must order its
    /// additions under a lock of its own (a launcher chaining tasks in the order added) never
    /// resumes anything while holding it.
    func addLeavingWakeups(_ definitions: [NodeDefinition]) throws(GraphError) -> PendingWakeups {
        let now = clock.now
        var effects = GraphStateMachine.Effects()
        let (_, wakeup) = try transitionLeavingWakeup { (machine) throws(GraphError) in
            guard case .running = machine.phase else {
                throw .runFinished(adding: definitions.first?.id ?? "")
            }
            try GraphValidation.validate(definitions, existing: machine.indexByID)
            machine.insert(definitions, now: now, effects: &effects)
        }
        registerMilestones(of: definitions)
        return PendingWakeups(storage: self, wakeup: wakeup, effects: effects)
    }

    func remove(_ id: String) throws(GraphError) -> Bool {
        let now = clock.now
        var effects = GraphStateMachine.Effects()
        let result = transition { $0.remove(id, now: now, effects: &effects) }
        apply(effects)
        switch result {
        case .removed: return true
        case .alreadyEnded: return false
        case .unknown: throw .unknownTask(id)
        }
    }

    func result(of id: String) -> (any Sendable)? {
        state.withLock { $0.result(of: id) }
    }

    func milestone(_ name: String) -> MilestoneCell? {
        milestones.withLock { $0[name] }
    }

    // MARK: - Report

    private func makeReport() -> RunReport {
        state.withLock { machine in
            let nodes = machine.nodes
            let definitions = machine.definitions
            var records: [TaskRecord] = []
            records.reserveCapacity(nodes.count)
            var last = -1
            for (index, node) in nodes.enumerated() {
                // Ties go to the later node: a dependent ends no earlier than its dependencies.
                if last < 0 || node.endedAt >= nodes[last].endedAt { last = index }
                guard node.isReported, case .task(let spec) = definitions[index].kind else { continue }
                let definition = definitions[index]
                var dependencies = definition.requires
                for id in definition.after where machine.indexByID[id].map({ !definitions[Int($0)].isHidden }) ?? false
                {
                    dependencies.append(id)
                }
                records.append(
                    TaskRecord(
                        id: definition.id,
                        stage: definition.stage,
                        dependencies: dependencies,
                        outcome: node.outcome ?? .cancelled,
                        queuedAt: node.queuedAt,
                        startedAt: node.startedAt,
                        endedAt: node.endedAt,
                        attempts: Int(node.attempts),
                        placement: spec.placement
                    )
                )
            }
            var path: [String] = []
            var cursor = last
            while cursor >= 0 {
                let node = nodes[cursor]
                if node.isReported, node.startedAt != nil { path.append(definitions[cursor].id) }
                cursor = Int(node.lastDependency)
            }
            return RunReport(
                outcome: machine.outcome ?? .cancelled,
                tasks: records,
                milestones: machine.milestonesReached,
                duration: machine.finishedAt,
                criticalPath: path.reversed()
            )
        }
    }
}

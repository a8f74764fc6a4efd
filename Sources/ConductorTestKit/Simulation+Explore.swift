extension Simulation {
    /// Runs `scenario` under each seed in turn and stops at the first that fails — the
    /// scenario throws, `check` throws for its run, or it stalls — with the seed and the order
    /// in which its traced work started and ended. Returns how many seeds ran when none failed.
    ///
    /// ```swift
    /// do {
    ///     try await Simulation.explore(seeds: 1...500, launchHome) { run in
    ///         if run.value.session.config == nil { throw MissingConfig() }
    ///     }
    /// } catch {
    ///     print(error.seed, error.trace)   // then Simulation.replay(seed: error.seed, …)
    /// }
    /// ```
    ///
    /// Trace the work whose order matters with ``traced(_:isolation:_:)``. A failed `#expect` is
    /// recorded, not thrown, so it cannot stop the exploration: fail a seed with a thrown
    /// error (`try #require(…)` is one) or with `check`, which runs where the caller does
    /// (`isolation`), between two seeds.
    ///
    /// With a ``FaultPlan``, each seed also draws the faults ``injectFault(at:key:)`` injects,
    /// so a seed that failed because of a fault replays with the same fault at the same moment;
    /// pass `replay` the same plan.
    ///
    /// - Throws: ``SimulationError`` naming the failing seed: ``SimulationError/Code/failed``
    ///   with its ``SimulationError/trace``, or ``SimulationError/Code/stalled``.
    @discardableResult
    public static func explore<Value: Sendable>(
        seeds: some Sequence<UInt64>,
        faults: FaultPlan = .none,
        idleLimit: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ scenario: @escaping @Sendable (Simulation) async throws -> Value,
        check: (SimulationRun<Value>) throws -> Void = { _ in }
    ) async throws(SimulationError) -> Int {
        var count = 0
        for seed in seeds {
            _ = try await replay(
                seed: seed, faults: faults, idleLimit: idleLimit, isolation: isolation, scenario, check: check)
            count += 1
        }
        return count
    }

    /// Runs `scenario` under `seed` again — the interleaving that
    /// ``explore(seeds:faults:idleLimit:isolation:_:check:)`` reported — and applies `check` as it did, so a
    /// failure can be studied under a debugger and its fix proven on the same order.
    ///
    /// - Throws: ``SimulationError`` as ``explore(seeds:faults:idleLimit:isolation:_:check:)`` does.
    public static func replay<Value: Sendable>(
        seed: UInt64,
        faults: FaultPlan = .none,
        idleLimit: Duration = .seconds(5),
        isolation: isolated (any Actor)? = #isolation,
        _ scenario: @escaping @Sendable (Simulation) async throws -> Value,
        check: (SimulationRun<Value>) throws -> Void = { _ in }
    ) async throws(SimulationError) -> SimulationRun<Value> {
        let ending = try await execute(
            seed: seed, clock: ManualClock(), faults: faults, idleLimit: idleLimit, scenario)
        switch ending.result {
        case .failure(let error):
            throw .failed(seed: seed, trace: ending.trace, underlying: error)
        case .success(let value):
            let run = SimulationRun(
                seed: seed, value: value, jobsRun: ending.jobsRun, escapes: ending.escapes, trace: ending.trace,
                faults: ending.faults)
            do {
                try check(run)
            } catch {
                throw .failed(seed: seed, trace: run.trace, underlying: error)
            }
            return run
        }
    }

    /// Runs `body` as the unit of work `name`, recording in the simulation's trace when it
    /// started and when it ended (or failed): the order ``SimulationError/trace`` reports.
    ///
    /// ```swift
    /// graph.add("session") { _ in try await simulation.traced("session") { try await openSession() } }
    /// ```
    public func traced<Result>(
        _ name: String,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Result
    ) async rethrows -> Result {
        record("\(name) started")
        do {
            let result = try await body()
            record("\(name) ended")
            return result
        } catch {
            record("\(name) failed")
            throw error
        }
    }
}

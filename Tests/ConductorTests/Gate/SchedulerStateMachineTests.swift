import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The scheduler's decisions, without any concurrency: payloads are strings.
@Suite struct SchedulerStateMachineTests {
    typealias Machine = SchedulerStateMachine<String>

    @Test func startsAtOnceWithinTheLimitAndQueuesBeyondIt() {
        var machine = Machine(limit: 2, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .default, payload: "b") == .start)
        #expect(machine.submit(id: 2, priority: .default, payload: "c") == .enqueued)
        #expect(machine.finish(unique: false) == ["c"])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }

    @Test func higherPrioritiesGoFirstAndFIFOWithinAPriority() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .low, payload: "running") == .start)
        let queued: [(String, Machine.Priority)] = [
            ("low1", .low), ("default1", .default), ("high1", .high), ("low2", .low), ("high2", .high),
            ("default2", .default),
        ]
        for (index, (name, priority)) in queued.enumerated() {
            #expect(machine.submit(id: UInt64(index + 1), priority: priority, payload: name) == .enqueued)
        }
        var order: [String] = []
        while !machine.isIdle { order += machine.finish(unique: false) }
        #expect(order == ["high1", "high2", "default1", "default2", "low1", "low2"])
    }

    @Test func agingLetsALowEntryOvertakeAStreamOfHighOnes() {
        var machine = Machine(limit: 1, agingThreshold: 3)
        #expect(machine.submit(id: 0, priority: .high, payload: "running") == .start)
        #expect(machine.submit(id: 1, priority: .low, payload: "low") == .enqueued)
        var nextID: UInt64 = 2
        var order: [String] = []
        for round in 0..<6 {
            #expect(machine.submit(id: nextID, priority: .high, payload: "high\(round)") == .enqueued)
            nextID += 1
            order += machine.finish(unique: false)
        }
        // The low entry waited through three starts, then went next.
        #expect(order.prefix(4) == ["high0", "high1", "high2", "low"])
    }

    @Test func uniqueWaitsForRunningWorkThenRunsAloneAndHoldsBackLaterWork() {
        var machine = Machine(limit: 4, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .default, payload: "b") == .start)
        #expect(machine.submit(id: 2, priority: .unique, payload: "refresh") == .enqueued)
        // A barrier is queued: nothing may start, even with free slots.
        #expect(machine.submit(id: 3, priority: .high, payload: "c") == .enqueued)
        #expect(machine.startImmediately(.high) == false)
        #expect(machine.finish(unique: false) == [])
        #expect(machine.finish(unique: false) == ["refresh"])
        #expect(machine.uniqueRunning)
        #expect(machine.submit(id: 4, priority: .unique, payload: "refresh2") == .enqueued)
        // The second unique runs before the normal work, and alone.
        #expect(machine.finish(unique: true) == ["refresh2"])
        #expect(machine.finish(unique: true) == ["c"])
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }

    @Test func uniqueIsNotBlockedByAFullConcurrencyLimitOfQueuedWork() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "running") == .start)
        for id in 1...10 {
            #expect(machine.submit(id: UInt64(id), priority: .high, payload: "queued\(id)") == .enqueued)
        }
        #expect(machine.submit(id: 11, priority: .unique, payload: "refresh") == .enqueued)
        #expect(machine.finish(unique: false) == ["refresh"])
        #expect(machine.finish(unique: true) == ["queued1"])
    }

    @Test func uniqueStartsImmediatelyWhenNothingRuns() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.startImmediately(.unique) == true)
        #expect(machine.startImmediately(.unique) == false)
        #expect(machine.startImmediately(.default) == false)
    }

    @Test func cancellingAQueuedEntryRemovesItAndReleasesABarrier() {
        var machine = Machine(limit: 2, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        #expect(machine.submit(id: 1, priority: .unique, payload: "refresh") == .enqueued)
        #expect(machine.submit(id: 2, priority: .default, payload: "b") == .enqueued)
        let removed = machine.cancel(id: 1)
        #expect(removed?.cancelled == "refresh")
        // With the barrier gone, "b" fits in the free slot.
        #expect(removed?.started == ["b"])
        #expect(machine.cancel(id: 1) == nil)
        #expect(machine.cancel(id: 2) == nil)
    }

    @Test func cancelledEntriesAreSkipped() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "a") == .start)
        for id in 1...3 { _ = machine.submit(id: UInt64(id), priority: .default, payload: "q\(id)") }
        #expect(machine.cancel(id: 1)?.cancelled == "q1")
        #expect(machine.cancel(id: 2)?.cancelled == "q2")
        #expect(machine.finish(unique: false) == ["q3"])
        #expect(machine.queuedCount == 0)
    }

    @Test func shutdownDropsEverythingQueuedOnceAndRejectsLaterWork() {
        var machine = Machine(limit: 1, agingThreshold: 100)
        #expect(machine.submit(id: 0, priority: .default, payload: "running") == .start)
        _ = machine.submit(id: 1, priority: .low, payload: "low")
        _ = machine.submit(id: 2, priority: .unique, payload: "refresh")
        _ = machine.submit(id: 3, priority: .high, payload: "high")
        #expect(machine.shutdown() == ["refresh", "high", "low"])
        #expect(machine.shutdown() == [])
        #expect(machine.submit(id: 4, priority: .high, payload: "late") == .rejected)
        #expect(machine.startImmediately(.high) == nil)
        #expect(machine.finish(unique: false) == [])
        #expect(machine.isIdle)
    }

    // MARK: - The aging bound

    /// Issue 14 §2, as measured: limit 1, threshold 4, one low entry, then a stream of high
    /// ones topped up as each completes. Every high entry queued between the same two starts
    /// used to tie with the low one, and the higher lane won every tie.
    @Test func aLowEntryStartsAfterAtMostThresholdHighOnesQueuedAfterIt() {
        var machine = Machine(limit: 1, agingThreshold: 4)
        #expect(machine.submit(id: 0, priority: .high, payload: "running") == .start)
        #expect(machine.submit(id: 1, priority: .low, payload: "low") == .enqueued)
        var nextID: UInt64 = 2
        for _ in 0..<3 {
            #expect(machine.submit(id: nextID, priority: .high, payload: "high\(nextID)") == .enqueued)
            nextID += 1
        }
        var order: [String] = []
        for _ in 0..<40 {
            order += machine.finish(unique: false)
            #expect(machine.submit(id: nextID, priority: .high, payload: "high\(nextID)") == .enqueued)
            nextID += 1
        }
        let low = order.firstIndex(of: "low")
        #expect(low != nil && low! <= 4, "\(order)")
    }

    /// The bound the API documents, over random arrival streams: an entry is overtaken (an
    /// entry queued after it starts before it) at most `agingThreshold` times.
    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0xA9E_0002))
    func noQueuedEntryIsOvertakenMoreThanTheThreshold(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let threshold = Int.random(in: 1...6, using: &generator)
        var machine = SchedulerStateMachine<UInt64>(
            limit: Int.random(in: 1...3, using: &generator), agingThreshold: threshold)
        var queueOrder: [UInt64: Int] = [:]  // id → position in queue order
        var queued = 0
        var overtakes: [UInt64: Int] = [:]
        var waiting: Set<UInt64> = []
        var running = 0
        var nextID: UInt64 = 0
        func started(_ ids: [UInt64]) {
            for id in ids {
                running += 1
                waiting.remove(id)
                let position = queueOrder[id]!
                for other in waiting where queueOrder[other]! < position { overtakes[other, default: 0] += 1 }
            }
        }
        for _ in 0..<400 {
            if running > 0 && Int.random(in: 0..<3, using: &generator) == 0 {
                running -= 1
                started(machine.finish(unique: false))
                continue
            }
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let priority = [RequestPriority.low, .default, .high].randomElement(using: &generator)!
                let id = nextID
                nextID += 1
                switch machine.submit(id: id, priority: priority, payload: id) {
                case .start: running += 1
                case .enqueued:
                    queueOrder[id] = queued
                    queued += 1
                    waiting.insert(id)
                case .rejected: Issue.record("seed \(seed): rejected")
                }
            }
        }
        while running > 0 {
            running -= 1
            started(machine.finish(unique: false))
        }
        #expect(waiting.isEmpty, "seed \(seed)")
        let worst = overtakes.values.max() ?? 0
        #expect(worst <= threshold, "seed \(seed): overtaken \(worst) times with a threshold of \(threshold)")
    }

    /// Cancelled and raised entries leave dead ids in their old lanes: over random submits,
    /// cancels, raises and finishes (no aging), the machine starts exactly what a plain model
    /// of FIFO lanes starts — the front of the highest non-empty lane — and each entry once.
    @Test(arguments: StressConfiguration.seeds(default: 200, base: 0xA9E_0003))
    func cancelledAndRaisedEntriesNeverStartOutOfTurn(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var machine = SchedulerStateMachine<UInt64>(
            limit: Int.random(in: 1...3, using: &generator), agingThreshold: 1_000_000)
        var model: [[UInt64]] = [[], [], []]  // live queued ids per lane, front first
        var running = 0
        var ended: Set<UInt64> = []
        var nextID: UInt64 = 0
        func started(_ ids: [UInt64]) {
            for id in ids {
                running += 1
                let lane = model.lastIndex { !$0.isEmpty }
                #expect(lane.map { model[$0].first } == id, "seed \(seed): started \(id), model \(model)")
                if let lane { model[lane].removeFirst() }
                #expect(ended.insert(id).inserted, "seed \(seed): \(id) ended twice")
            }
        }
        for _ in 0..<500 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<3 where running > 0:
                running -= 1
                started(machine.finish(unique: false))
            case 3:
                guard let id = model.flatMap({ $0 }).randomElement(using: &generator) else { continue }
                let removed = machine.cancel(id: id)
                #expect(removed?.cancelled == id, "seed \(seed)")
                for lane in model.indices { model[lane].removeAll { $0 == id } }
                ended.insert(id)
                started(removed?.started ?? [])
            case 4:
                guard let id = model[0...1].flatMap({ $0 }).randomElement(using: &generator) else { continue }
                let from = model.firstIndex { $0.contains(id) }!
                let to = Int.random(in: (from + 1)...2, using: &generator)
                let raised = machine.raise(id: id, to: RequestPriority(rawValue: to)!)
                #expect(raised, "seed \(seed)")
                model[from].removeAll { $0 == id }
                model[to].append(id)
            default:
                let lane = Int.random(in: 0...2, using: &generator)
                let id = nextID
                nextID += 1
                switch machine.submit(id: id, priority: RequestPriority(rawValue: lane)!, payload: id) {
                case .start:
                    running += 1
                    ended.insert(id)
                case .enqueued: model[lane].append(id)
                case .rejected: Issue.record("seed \(seed): rejected")
                }
            }
            #expect(machine.queuedCount == model.reduce(0) { $0 + $1.count }, "seed \(seed)")
        }
        while running > 0 {
            running -= 1
            started(machine.finish(unique: false))
        }
        #expect(model.allSatisfy(\.isEmpty) && ended.count == Int(nextID), "seed \(seed)")
    }
}

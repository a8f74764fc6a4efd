import Conductor
import ConductorTestKit
import Synchronization
import Testing

/// Racing tasks with deterministic assertions: however they interleave, there is exactly
/// one outcome, delivered once.
@Suite struct HarmonizerRaceTests {
    @Test func tenThousandConcurrentCountDownsCompleteExactlyOnce() async throws {
        let participants = 10_000
        let tasks = 100
        let extraPerTask = 10
        let recorder = OutcomeRecorder()
        let harmonizer = try Harmonizer(count: participants)
        harmonizer.onOutcome(on: .immediate, recorder.record)

        let results = await withTaskGroup(of: (task: Int, counted: Int).self) { group in
            for task in 0..<tasks {
                group.addTask {
                    harmonizer.stash(task, as: "task-\(task)")
                    var counted = 0
                    for _ in 0..<(participants / tasks + extraPerTask) where harmonizer.leave() { counted += 1 }
                    return (task, counted)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }

        #expect(results.map(\.counted).reduce(0, +) == participants, "every count-down beyond the count was refused")
        #expect(recorder.received.count == 1)
        let outcome = await harmonizer.outcome
        #expect(outcome.isCompleted)
        // A task that counted down at least once stashed before it did, so whoever completed
        // must see its value (the counter's acquire-release ordering).
        let stashed = Set(outcome.stash?.keys.map { $0 } ?? [])
        let mustBeStashed = Set(results.filter { $0.counted > 0 }.map { "task-\($0.task)" })
        #expect(mustBeStashed.isSubset(of: stashed))
        #expect(harmonizer.count == 0)
    }

    @Test func tenThousandConcurrentCountDownsThroughTheRegistry() async throws {
        let participants = 10_000
        let registry = HarmonizerRegistry()
        let misuses = Atomic(0)
        registry.onMisuse { _ in misuses.add(1, ordering: .relaxed) }
        let recorder = OutcomeRecorder()
        try registry.create("fan-in", count: participants / 2, on: .immediate, completion: recorder.record)

        let (ups, downs) = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<50 {
                group.addTask {
                    var ups = 0
                    var downs = 0
                    for _ in 0..<50 where registry.enter("fan-in") { ups += 1 }
                    for _ in 0..<250 where registry.leave("fan-in") { downs += 1 }
                    return (ups, downs)
                }
            }
            return await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }

        // 12,500 count-downs are always enough, so it completes; whatever the interleaving,
        // the count-downs that counted are the initial count plus the count-ups that counted
        // (a count-up after the completion finds no name), and every other call was reported.
        #expect(downs == participants / 2 + ups)
        #expect(recorder.received.count == 1)
        #expect(misuses.load(ordering: .relaxed) == 50 * 300 - ups - downs)
        #expect(registry.harmonizer(named: "fan-in") == nil)
    }

    /// The timeout, the last count-down and a cancel all race; one wins, and the outcome the
    /// observer, the waiter and the event journal see is that one.
    @Test func timeoutLastCountDownAndCancelProduceExactlyOneOutcome() async throws {
        for iteration in 0..<2_000 {
            let clock = ManualClock()
            let recorder = OutcomeRecorder()
            let harmonizer = try Harmonizer(participants: ["last"], timeout: .seconds(1), clock: clock)
            harmonizer.onOutcome(on: .immediate, recorder.record)
            await clock.sleepers(atLeast: 1)

            // Waking the timeout's task takes longer than starting a racer, so give it a
            // head start on most iterations; otherwise it would almost never win.
            let timeoutFirst = iteration % 4 != 0
            if timeoutFirst { clock.advance(by: .seconds(1)) }
            let (left, cancelled) = await withTaskGroup(of: (Bool?, Bool?).self) { group in
                let racers: [@Sendable () -> (Bool?, Bool?)] = [
                    { (harmonizer.leave("last"), nil) },
                    { (nil, harmonizer.cancel()) },
                ]
                for racer in iteration.isMultiple(of: 2) ? racers : racers.reversed() {
                    group.addTask(operation: racer)
                }
                if !timeoutFirst { clock.advance(by: .seconds(1)) }
                var left = false
                var cancelled = false
                for await (leave, cancel) in group {
                    left = left || leave == true
                    cancelled = cancelled || cancel == true
                }
                return (left, cancelled)
            }

            let outcome = await harmonizer.outcome
            var events: [String] = []
            for await event in harmonizer.events { events.append("\(event)") }
            #expect(recorder.received.count == 1)
            #expect("\(recorder.received[0])" == "\(outcome)")
            #expect(events.last == "finished(\(outcome))")
            #expect(events.filter { $0.hasPrefix("finished") }.count == 1)
            #expect(cancelled == outcome.isCancelled, "cancel() returns true only when it decided")
            if outcome.isCompleted { #expect(left) }
        }
    }

    @Test func namedArrivalsAndDeparturesFromManyTasks() async throws {
        let harmonizer = try Harmonizer(count: 1)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                group.addTask {
                    for step in 0..<50 {
                        let name = "t\(task)-\(step)"
                        harmonizer.enter(name)
                        harmonizer.leave(name)
                    }
                }
            }
        }
        #expect(harmonizer.count == 1)
        #expect(harmonizer.leave())
        #expect(await harmonizer.outcome.isCompleted)
    }
}

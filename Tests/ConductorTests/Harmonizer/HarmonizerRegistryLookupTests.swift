import Conductor
import ConductorCore
import Foundation
import Logging
import Synchronization
import Testing

/// The registry's lock-free lookup: each thread remembers the last name it looked up and uses
/// it while no name has been added or removed. These tests make that memory go stale in every
/// way and check that a count-down always reaches the harmonizer waiting under the name now.
@Suite struct HarmonizerRegistryLookupTests {
    // MARK: - Stale memory, deterministic

    @Test func aCountDownAfterRecreationReachesTheNewHarmonizer() throws {
        let registry = HarmonizerRegistry()
        let first = try registry.create("feed", count: 3, on: .immediate) { _ in }
        #expect(registry.leave("feed"), "this thread now remembers the first harmonizer")
        #expect(first.cancel())
        let second = try registry.create("feed", count: 2, on: .immediate) { _ in }
        #expect(registry.leave("feed"))
        #expect(second.count == 1, "counted into the new harmonizer")
        #expect(first.count == 0)
    }

    @Test func aCountDownAfterRemovalIsReportedOnce() throws {
        let registry = HarmonizerRegistry()
        let reports = Lock<[HarmonizerError.Code]>([])
        registry.onMisuse { error in reports.withLock { $0.append(error.code) } }
        try registry.create("feed", count: 2, on: .immediate) { _ in }
        #expect(registry.leave("feed"))
        #expect(registry.leave("feed"), "completes and removes the name")
        #expect(!registry.leave("feed"))
        #expect(!registry.leave("feed"))
        #expect(reports.withLock { $0 } == [.unknownName, .unknownName])
    }

    @Test func theSameNameInTwoRegistriesIsNeverConfused() throws {
        let left = HarmonizerRegistry()
        let right = HarmonizerRegistry()
        let leftHarmonizer = try left.create("feed", count: 5, on: .immediate) { _ in }
        let rightHarmonizer = try right.create("feed", count: 5, on: .immediate) { _ in }
        for _ in 0..<2 {
            #expect(left.leave("feed"))
            #expect(right.leave("feed"))
        }
        #expect(left.leave("feed"))
        #expect(leftHarmonizer.count == 2)
        #expect(rightHarmonizer.count == 3)
        let log = CapturingLogHandler()
        let fresh = HarmonizerRegistry(logger: Logger(label: "test") { _ in log })
        #expect(!fresh.leave("feed"), "a new registry knows no names")
        #expect(log.lines.all.map(\.message) == ["leave('feed') ignored: no harmonizer named 'feed' is waiting"])
    }

    /// The completion runs inside the count-down that completed it, while that count-down is
    /// still using the harmonizer it remembered; the completion's own lookups must not make the
    /// thread forget (and release) that harmonizer under it.
    @Test func aCompletionThatRecreatesAndCountsDownItsOwnName() throws {
        let log = CapturingLogHandler()
        let registry = HarmonizerRegistry(logger: Logger(label: "test") { _ in log })
        let recreated = Lock<Harmonizer?>(nil)
        // Not kept here: only the registry and this thread's memory hold the first harmonizer.
        try registry.create("feed", count: 1, on: .immediate) { _ in
            let again = try? registry.create("feed", count: 3, on: .immediate) { _ in }
            #expect(registry.leave("feed"))
            #expect(!registry.leave("other"))
            recreated.withLock { $0 = again }
        }
        #expect(registry.count("feed") == 1, "this thread now remembers the first harmonizer")
        #expect(registry.leave("feed"), "completes the first; its completion counts the second down")
        let second = try #require(recreated.withLock { $0 })
        #expect(second.count == 2)
        #expect(registry.leave("feed"))
        #expect(second.count == 1)
        #expect(log.lines.all.map(\.message) == ["leave('other') ignored: no harmonizer named 'other' is waiting"])
    }

    /// The count-down by name's fast path (the same string, no name changed since, others
    /// expected) against its fallbacks: an equal name made another way, a name changed by
    /// another thread in between. Two threads take turns, driven one step at a time in a seeded
    /// order, so each one's memory goes stale through the other's changes; every count-down
    /// must land on the harmonizer waiting under the name at that moment, or be refused.
    @Test func lockstepThreadsNeverCountIntoAStaleHarmonizer() throws {
        let registry = HarmonizerRegistry()
        registry.onMisuse { _ in }
        let workers = [LockstepThread(), LockstepThread()]
        var random = SplitMix64(seed: 36)
        var current: [String: Harmonizer] = [:]
        var expected: [ObjectIdentifier: Int] = [:]
        for step in 0..<2_000 {
            let worker = workers[Int(random.next() % 2)]
            let name = ["feed", "page"][Int(random.next() % 2)]
            switch random.next() % 8 {
            case 0:
                // Cancel and create again: a new harmonizer under the same name.
                let counted = worker.run { registry.cancel(name) }
                #expect(counted == (current[name] != nil), "step \(step)")
                let fresh = try #require(worker.run { try? registry.create(name, count: 50, on: .immediate) { _ in } })
                current[name] = fresh
                expected[ObjectIdentifier(fresh)] = 50
            default:
                // The literal (the same string each time) or an equal one built at run time.
                let spelled = random.next() % 3 == 0 ? String(name.reversed().reversed()) : name
                let counted = worker.run { registry.leave(spelled) }
                let target = current[name]
                #expect(counted == (target != nil), "step \(step)")
                if let target {
                    expected[ObjectIdentifier(target)]! -= 1
                    if expected[ObjectIdentifier(target)] == 0 { current[name] = nil }
                }
            }
            for (name, harmonizer) in current {
                #expect(harmonizer.count == expected[ObjectIdentifier(harmonizer)], "\(name) at step \(step)")
            }
        }
        for worker in workers { worker.stop() }
    }

    // MARK: - Races

    /// Workers count one name down while each generation's completion creates the next one
    /// (re-creation racing count-downs that remember the old one). Every count-down counts
    /// into exactly one generation or is reported exactly once; each generation completes once.
    @Test func countDownsRacingRecreationOfTheSameName() async throws {
        let generations = 200
        let perGeneration = 5
        let registry = HarmonizerRegistry()
        let misuses = Atomic(0)
        registry.onMisuse { _ in misuses.add(1, ordering: .relaxed) }
        let completions = Lock<[Int]>([])
        let last = Lock<Harmonizer?>(nil)
        let done = Flag()

        @Sendable func create(_ generation: Int) {
            let harmonizer = try? registry.create("fan-in", count: perGeneration, on: .immediate) { outcome in
                #expect(outcome.isCompleted)
                completions.withLock { $0.append(generation) }
                if generation + 1 < generations {
                    create(generation + 1)
                } else {
                    done.raise()
                }
            }
            last.withLock { $0 = harmonizer }
        }
        create(0)

        let counted = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var counted = 0
                    var refused = 0
                    // The workers themselves complete each generation (and run the completion
                    // that creates the next), so looping until the last one is done cannot starve.
                    while !done.isRaised, counted + refused < 1_000_000 {
                        if registry.leave("fan-in") { counted += 1 } else { refused += 1 }
                    }
                    return (counted, refused)
                }
            }
            return await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }

        // Between a completion and the next create the name is free: those count-downs are refused.
        #expect(completions.withLock { $0 } == Array(0..<generations), "each generation completed once, in order")
        #expect(counted.0 == generations * perGeneration)
        #expect(misuses.load(ordering: .relaxed) == counted.1, "every refused count-down reported once")
        #expect(last.withLock { $0?.count } == 0)
        #expect(registry.harmonizer(named: "fan-in") == nil)
    }

    /// Count-downs race a cancel and re-creation of the same name: each generation ends
    /// exactly once, a cancelled one never completes, and every refusal is reported once.
    @Test func countDownsRacingCancelAndRecreation() async throws {
        let registry = HarmonizerRegistry()
        let misuses = Atomic(0)
        registry.onMisuse { _ in misuses.add(1, ordering: .relaxed) }
        let ended = Log()

        let (counted, refused, cancelled) = await withTaskGroup(of: (Int, Int, Int).self) { group in
            group.addTask {
                var cancelled = 0
                for generation in 0..<300 {
                    let harmonizer = try? registry.create("page", count: 1_000_000, on: .immediate) { _ in
                        ended.append("completed \(generation)")
                    }
                    harmonizer?.onOutcome(on: .immediate) { outcome in
                        if outcome.isCancelled { ended.append("cancelled \(generation)") }
                    }
                    await Task.yield()
                    if registry.cancel("page") { cancelled += 1 }
                }
                return (0, 0, cancelled)
            }
            for _ in 0..<3 {
                group.addTask {
                    var counted = 0
                    var refused = 0
                    for step in 0..<3_000 {
                        if registry.leave("page") { counted += 1 } else { refused += 1 }
                        if step.isMultiple(of: 100) { await Task.yield() }
                    }
                    return (counted, refused, 0)
                }
            }
            return await group.reduce((0, 0, 0)) { ($0.0 + $1.0, $0.1 + $1.1, $0.2 + $1.2) }
        }

        let endings = ended.entries
        #expect(endings.count == cancelled)
        #expect(endings.allSatisfy { $0.hasPrefix("cancelled") }, "a million count-downs are never reached")
        #expect(Set(endings).count == endings.count, "each generation ended once")
        #expect(counted + refused == 9_000)
        #expect(misuses.load(ordering: .relaxed) == refused)
        #expect(registry.harmonizer(named: "page") == nil)
    }
}

/// A thread of its own that runs one closure at a time when told to, so a test can interleave
/// two threads' registry calls in an order it chooses (each thread keeps its own lookup cache).
private final class LockstepThread: @unchecked Sendable {
    // Unchecked: `work` and `result` are written by one side and read by the other only across
    // a semaphore signal/wait pair, which orders them; nothing touches them concurrently.
    private var work: (() -> Any)?
    private var result: Any?
    private let start = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while true {
                start.wait()
                guard let work else { break }
                result = work()
                done.signal()
            }
            done.signal()
        }
        thread.start()
    }

    /// Runs `body` on the thread and returns what it returned.
    func run<T>(_ body: @escaping () -> T) -> T {
        work = body
        start.signal()
        done.wait()
        return result as! T
    }

    /// Ends the thread.
    func stop() {
        work = nil
        start.signal()
        done.wait()
    }
}

/// Lines appended from any task; a class so that sending closures can share it.
private final class Log: Sendable {
    private let lines = Lock<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var entries: [String] { lines.withLock { $0 } }
}

/// A one-way flag that sending closures can share.
private final class Flag: Sendable {
    private let value = Atomic(false)

    func raise() { value.store(true, ordering: .releasing) }

    var isRaised: Bool { value.load(ordering: .acquiring) }
}

import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// A journal kept under its owner's lock: retention, the end, and readers that wait for the
/// next append (or leave when cancelled) without a lock of the journal's own.
@Suite(.timeLimit(.minutes(1)))
struct JournalBufferTests {
    private final class Owner: Sendable {
        struct State {
            var journal = JournalBuffer<Int>(keepingNewest: 3)
        }

        let state = Lock(State())

        func append(_ events: [Int]) {
            let readers = state.withLock { $0.journal.append(contentsOf: events) }
            for reader in readers { reader.resume(returning: ()) }
        }

        func finish() {
            let readers = state.withLock { $0.journal.finish() }
            for reader in readers { reader.resume(returning: ()) }
        }

        func read(from index: Int) async -> (events: [Int], next: Int) {
            var index = index
            let events = await state.batch(from: &index, limit: .max, journal: \.journal)
            return (events, index)
        }

        var parkedReaders: Int { state.withLock { $0.journal.parkedReaderCount } }
    }

    @Test func keepsTheNewestEventsAndSkipsAReaderPastWhatWasDropped() async {
        let owner = Owner()
        owner.append([1, 2, 3, 4, 5])
        #expect(owner.state.withLock { $0.journal.snapshot } == [3, 4, 5])
        let read = await owner.read(from: 0)
        #expect(read.events == [3, 4, 5])
        #expect(read.next == 5)
    }

    /// Past the point where the dropped events are compacted away (as many as are kept, and at
    /// least 16), one at a time and in batches (their readers taken or left parked): what is
    /// kept, the indices and a read from any point agree with a plain list of every event.
    @Test(arguments: [0, 1, 3, 40])
    func retentionAgreesWithAPlainListAcrossCompactions(limit: Int) {
        var journal = JournalBuffer<Int>(keepingNewest: limit)
        var all: [Int] = []
        var next = 0
        for round in 0..<60 {
            let batch = Array(next..<next + round % 5)
            next += batch.count
            switch round % 3 {
            case 0: for event in batch { journal.append(event) }
            case 1: _ = journal.append(contentsOf: batch)
            default: journal.appendLeavingReaders(contentsOf: batch)
            }
            all += batch
            let kept = Array(all.suffix(limit))
            #expect(journal.snapshot == kept)
            #expect(journal.endIndex == all.count)
            for start in [0, all.count - kept.count, max(0, all.count - 1)] {
                var index = start
                let read = journal.read(from: &index, limit: .max) ?? []
                #expect(read == Array(all[max(start, all.count - kept.count)...]))
                #expect(index == all.count)
            }
        }
    }

    /// Whether the reader parked before the append or came after it, it gets exactly the
    /// appended events, and leaves no reader parked.
    @Test func aReaderWaitsForTheNextAppend() async {
        let owner = Owner()
        owner.append([1])
        let reader = Task { await owner.read(from: 1) }
        owner.append([2, 3])
        let read = await reader.value
        #expect(read.events == [2, 3])
        #expect(read.next == 3)
        #expect(owner.parkedReaders == 0)
    }

    @Test func afterTheEndAReaderGetsWhatIsLeftThenNothing() async {
        let owner = Owner()
        owner.append([1, 2])
        owner.finish()
        owner.append([3])
        #expect(await owner.read(from: 0).events == [1, 2])
        #expect(await owner.read(from: 2).events == [])
    }

    /// Cancelled before or after it parked, a reader returns nothing and leaves no waiter.
    @Test func aCancelledReaderLeavesWithNothingAndNoWaiterBehind() async {
        let owner = Owner()
        let reader = Task { await owner.read(from: 0) }
        reader.cancel()
        #expect(await reader.value.events == [])
        #expect(owner.parkedReaders == 0)
        owner.append([1])
    }
}

import ConductorTestKit
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// A journal's parked readers, kept in a `WaiterSet` and parked through `Lock.suspend`: an
/// append lets them go, and a reader cancelled while parked is taken out, so it is no longer
/// counted as parked.
@Suite(.timeLimit(.minutes(1)))
struct EventJournalReaderTests {
    /// Reads one batch from `index`, opening `parked` each time the reader parks.
    private func readBatch(_ journal: EventJournal<Int>, from start: Int, parked: ConductorTestKit.Latch) async -> [Int]
    {
        var index = start
        return await journal.batch(from: &index, limit: .max, isolation: nil) { parked.open() }
    }

    @Test func anAppendLetsAParkedReaderGo() async {
        let journal = EventJournal<Int>(retention: .everything)
        let parked = ConductorTestKit.Latch()
        let reader = Task { await readBatch(journal, from: 0, parked: parked) }
        await parked.wait()
        #expect(journal.hasParkedReaders)
        journal.append(1).resume()
        #expect(await reader.value == [1])
        #expect(!journal.hasParkedReaders)
    }

    @Test func aReaderCancelledWhileParkedIsTakenOut() async {
        let journal = EventJournal<Int>(retention: .everything)
        let parked = ConductorTestKit.Latch()
        let reader = Task { await readBatch(journal, from: 0, parked: parked) }
        await parked.wait()
        #expect(journal.hasParkedReaders)
        reader.cancel()
        #expect(await reader.value.isEmpty)
        #expect(!journal.hasParkedReaders, "the cancelled reader no longer counts as parked")
        // Nobody left to wake: the append resumes nothing twice.
        journal.append(1).resume()
        #expect(journal.snapshot == [1])
    }

    @Test func aCancelledTaskDoesNotPark() async {
        let journal = EventJournal<Int>(retention: .everything)
        let parked = ConductorTestKit.Latch()
        let batch = await Task {
            withUnsafeCurrentTask { task in task?.cancel() }
            return await readBatch(journal, from: 0, parked: parked)
        }.value
        #expect(batch.isEmpty)
        #expect(!parked.isOpen)
        #expect(!journal.hasParkedReaders)
    }
}

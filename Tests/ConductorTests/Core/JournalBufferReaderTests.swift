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
struct JournalBufferReaderTests {
    private final class Journal: Sendable {
        let state = Lock(JournalBuffer<Int>(keepingNewest: nil))

        func append(_ event: Int) {
            for reader in state.withLock({ $0.append(contentsOf: [event]) }) { reader.resume(returning: ()) }
        }

        var hasParkedReaders: Bool { state.withLock { $0.parkedReaderCount > 0 } }
        var snapshot: [Int] { state.withLock { $0.snapshot } }
    }

    /// Reads one batch from `index`, opening `parked` each time the reader parks.
    private func readBatch(_ journal: Journal, from start: Int, parked: ConductorTestKit.Latch) async -> [Int] {
        var index = start
        return await journal.state.batch(from: &index, limit: .max, journal: \.self) { parked.open() }
    }

    @Test func anAppendLetsAParkedReaderGo() async {
        let journal = Journal()
        let parked = ConductorTestKit.Latch()
        let reader = Task { await readBatch(journal, from: 0, parked: parked) }
        await parked.wait()
        #expect(journal.hasParkedReaders)
        journal.append(1)
        #expect(await reader.value == [1])
        #expect(!journal.hasParkedReaders)
    }

    @Test func aReaderCancelledWhileParkedIsTakenOut() async {
        let journal = Journal()
        let parked = ConductorTestKit.Latch()
        let reader = Task { await readBatch(journal, from: 0, parked: parked) }
        await parked.wait()
        #expect(journal.hasParkedReaders)
        reader.cancel()
        #expect(await reader.value.isEmpty)
        #expect(!journal.hasParkedReaders, "the cancelled reader no longer counts as parked")
        // Nobody left to wake: the append resumes nothing twice.
        journal.append(1)
        #expect(journal.snapshot == [1])
    }

    @Test func aCancelledTaskDoesNotPark() async {
        let journal = Journal()
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

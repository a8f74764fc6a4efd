import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Appends in numbered turns: how a primitive that numbers its events under its own lock
/// appends them after releasing it, without two locks held together and without reordering.
@Suite(.timeLimit(.minutes(1)))
struct EventJournalTurnTests {
    @Test func eventsAppearInTurnOrderWhateverOrderTheyArriveIn() {
        let journal = EventJournal<Int>(retention: .everything)
        journal.append(2, turn: 2).resume()
        journal.finish(turn: 3).resume()
        #expect(journal.snapshot.isEmpty)
        journal.append(0, turn: 0).resume()
        #expect(journal.snapshot == [0])
        journal.append(1, turn: 1).resume()
        #expect(journal.snapshot == [0, 1, 2])
        // The journal ended in turn 3: what comes after is dropped.
        journal.append(4, turn: 4).resume()
        #expect(journal.snapshot == [0, 1, 2])
    }

    /// The end arrived first; a reader still gets every earlier turn before it.
    @Test func aReaderSeesTheEndOnlyAfterEveryEarlierTurn() async {
        let journal = EventJournal<Int>(retention: .everything)
        journal.finish(turn: 2).resume()
        journal.append(1, turn: 1).resume()
        let reader = Task {
            var index = 0
            var read: [Int] = []
            while true {
                let batch = await journal.batch(from: &index)
                if batch.isEmpty { return read }
                read += batch
            }
        }
        journal.append(0, turn: 0).resume()
        #expect(await reader.value == [0, 1])
    }

    @Test func aJournalThatKeepsTheNewestTrimsAfterTurnsAreFilledIn() {
        let journal = EventJournal<Int>(retention: .newest(2))
        journal.append(1, turn: 1).resume()
        journal.append(2, turn: 2).resume()
        journal.append(0, turn: 0).resume()
        #expect(journal.snapshot == [1, 2])
    }
}

import Conductor
import ConductorTestKit
import XCTest

/// The test kit from XCTest, with no Swift Testing imported: the clock drives a timeout and
/// the ledger is checked through `violations`. (`swift test` links every test target into one
/// bundle with Swift Testing, so this alone cannot show the kit links without it; `.ci/run`
/// also checks that only the kit's `+Testing` files import Swift Testing.)
final class TestKitXCTests: XCTestCase {
    func testATimeoutOnAManualClockEndsEveryParticipantOnce() async throws {
        let clock = ManualClock()
        let ledger = OutcomeLedger<String>()
        let harmonizer = try Harmonizer(participants: ["avatar", "feed"], timeout: .seconds(2), clock: clock)
        ledger.expect("avatar")
        ledger.expect("feed")

        XCTAssertTrue(harmonizer.leave("avatar"))
        ledger.record("avatar", "left")
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        guard case .timedOut(_, let missing) = await harmonizer.outcome else {
            return XCTFail("the harmonizer should have timed out")
        }
        for participant in missing { ledger.record(participant, "missing at the timeout") }

        XCTAssertEqual(missing, ["feed"])
        XCTAssertEqual(ledger.violations, [])
    }
}

import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// Debug builds check that no lock is taken while the same thread holds another. These tests
/// replace the trap with a report on their own thread (other threads keep trapping) and make
/// nestings on purpose. Release builds do not check, so the suite is debug-only.
#if DEBUG
    @Suite struct LockNestingTests {
        @Test func aLockTakenUnderAnotherIsReportedNamingWhereBothWereMade() {
            let outer = Lock(0, fileID: "Tests/Outer.swift", line: 1)
            let inner = Lock(0, fileID: "Tests/Inner.swift", line: 2)
            let found = NestedLockAcquisition.recorded {
                outer.withLock { _ in inner.withLock { $0 += 1 } }
            }
            #expect(found == [NestedLockAcquisition(held: "Tests/Outer.swift:1", acquired: "Tests/Inner.swift:2")])
        }

        @Test func aLockTakenUnderItselfIsReportedBeforeItCanDeadlock() {
            let lock = Lock(0, fileID: "Tests/Lock.swift", line: 3)
            let tried = Lock(0, fileID: "Tests/Tried.swift", line: 4)
            let found = NestedLockAcquisition.recorded {
                // Trying cannot wait, so it is not a nesting; taking a lock under the one tried is.
                tried.withLockIfAvailable { _ in
                    _ = lock.withLockIfAvailable { _ in 0 }
                    lock.withLock { $0 += 1 }
                }
            }
            #expect(found == [NestedLockAcquisition(held: "Tests/Tried.swift:4", acquired: "Tests/Lock.swift:3")])
        }

        @Test func locksTakenOneAfterAnotherAreNotANesting() {
            let first = Lock(0)
            let second = Lock(0)
            let found = NestedLockAcquisition.recorded {
                first.withLock { $0 += 1 }
                second.withLock { $0 += 1 }
                first.withLock { $0 += 1 }
            }
            #expect(found.isEmpty)
        }

        /// Each level of a nesting is reported, and releasing the inner lock makes the outer
        /// one the held lock again.
        @Test func everyLevelOfANestingIsReportedAndReleasingRestoresTheOuterLock() {
            let outer = Lock(0, fileID: "Tests/Outer.swift", line: 5)
            let middle = Lock(0, fileID: "Tests/Middle.swift", line: 6)
            let innermost = Lock(0, fileID: "Tests/Innermost.swift", line: 7)
            let found = NestedLockAcquisition.recorded {
                outer.withLock { _ in
                    middle.withLock { _ in innermost.withLock { $0 += 1 } }
                    // Released: the outer lock is the one held again.
                    innermost.withLock { $0 += 1 }
                }
            }
            #expect(
                found == [
                    NestedLockAcquisition(held: "Tests/Outer.swift:5", acquired: "Tests/Middle.swift:6"),
                    NestedLockAcquisition(held: "Tests/Middle.swift:6", acquired: "Tests/Innermost.swift:7"),
                    NestedLockAcquisition(held: "Tests/Outer.swift:5", acquired: "Tests/Innermost.swift:7"),
                ])
        }

        /// A harmonizer numbers its events under its lock and appends them to its journal after
        /// releasing it; a named count-down that completes, a timeout's arming and a cancel
        /// all take one lock at a time.
        @Test func aHarmonizerTakesOneLockAtATime() throws {
            let found = try NestedLockAcquisition.recorded {
                let named = try Harmonizer(participants: ["a"], timeout: .seconds(60))
                named.enter("b")
                named.stash(1, as: "one")
                named.leave("a")
                named.leave("b")
                let cancelled = try Harmonizer(count: 2)
                cancelled.leave()
                cancelled.cancel()
                let registry = HarmonizerRegistry()
                _ = try registry.create("page", participants: ["x"], timeout: .seconds(60), on: .immediate) { _ in }
                _ = registry.leave("page", participant: "x")
            }
            #expect(found.isEmpty, "\(found)")
        }
    }
#endif

import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The gate's credential decisions, without any concurrency: waiters are strings, time is a
/// number.
@Suite struct GateCredentialMachineTests {
    typealias Machine = GateCredentialMachine<String, String>

    static func machine(
        _ credential: String? = "t1", window: (maxRefreshes: Int, period: Duration)? = nil
    ) -> Machine {
        Machine(
            credential: credential, refreshWindow: window, jitterSeed: 1)
    }

    // MARK: - No request on a dying credential

    /// The regression of issue 14 §1: the rejection that decides a refresh moves the gate to
    /// refreshing in the same transition, so the very next request parks instead of going
    /// out with the credential being replaced.
    @Test func theRejectionThatDecidesARefreshParksEveryLaterRequest() throws {
        var machine = Self.machine()
        guard
            case .send("t1", 1) = machine.authorize(
                request: 0, epoch: 0, needsAuthorization: true, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a send")
            return
        }
        guard
            case .parkAndRefresh(let flight, "t1") = machine.rejected(
                request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        #expect(flight == .init(id: 0, fromVersion: 1, trigger: 0))
        #expect(machine.refresh == .refreshing(flight))
        // A request that reaches its slot now parks; one that comes back 401 with v1 parks too.
        guard case .park = machine.authorize(request: 1, epoch: 0, needsAuthorization: true, waiter: "w1", now: .zero)
        else {
            Issue.record("expected a park")
            return
        }
        guard case .park = machine.rejected(request: 2, sentVersion: 1, waiter: "w2", now: .zero)
        else {
            Issue.record("expected a park without a second refresh")
            return
        }
        #expect(machine.refreshesStarted == 1)
        guard case .settle(let waiters, 2, nil) = machine.refreshSucceeded(flight, with: "t2") else {
            Issue.record("expected the waiters")
            return
        }
        #expect(Set(waiters) == ["w0", "w1", "w2"])
        guard
            case .send("t2", 2) = machine.authorize(
                request: 3, epoch: 0, needsAuthorization: true, waiter: "w3", now: .zero)
        else {
            Issue.record("expected a send with v2")
            return
        }
        // A late rejection of v1 is simply sent again.
        guard case .resend = machine.rejected(request: 4, sentVersion: 1, waiter: "w4", now: .zero) else {
            Issue.record("expected a resend")
            return
        }
    }

    /// A refresh's end wakes parked requests in the order they parked, so they queue for a
    /// slot again in that order; a cancelled one leaves the line.
    @Test func parkedRequestsAreWokenInTheOrderTheyParked() {
        var machine = Self.machine()
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 9, sentVersion: 1, waiter: "w9", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        for id in [4, 1, 7, 3] as [UInt64] {
            _ = machine.authorize(request: id, epoch: 0, needsAuthorization: true, waiter: "w\(id)", now: .zero)
        }
        #expect(machine.cancelParked(request: 7) == "w7")
        #expect(machine.cancelParked(request: 7) == nil)
        guard case .settle(let waiters, _, nil) = machine.refreshSucceeded(flight, with: "t2") else {
            Issue.record("expected the waiters")
            return
        }
        #expect(waiters == ["w9", "w4", "w1", "w3"])
        #expect(machine.parkedCount == 0)
    }

    /// The storage's first look: `authorizeWithoutParking` answers what `authorize` would when
    /// that is a send or a failure, `nil` when it would park, and changes nothing.
    @Test func authorizingWithoutParkingAgreesWithAuthorizeAndChangesNothing() {
        var machine = Self.machine()
        guard case .send("t1", 1) = machine.authorizeWithoutParking(epoch: 0, needsAuthorization: true) else {
            Issue.record("expected a send")
            return
        }
        guard case .send(nil, 1) = machine.authorizeWithoutParking(epoch: 0, needsAuthorization: false) else {
            Issue.record("expected an anonymous send")
            return
        }
        _ = machine.rejected(request: 0, sentVersion: 1, waiter: nil, now: .zero)
        #expect(machine.authorizeWithoutParking(epoch: 0, needsAuthorization: true) == nil)
        #expect(machine.parkedCount == 0 && machine.refreshesStarted == 1)
        var empty = Self.machine(nil)
        #expect(empty.authorizeWithoutParking(epoch: 0, needsAuthorization: true) == nil)
        #expect(empty.refreshesStarted == 0 && empty.refresh == .idle)
        _ = empty.signOut()
        guard case .fail(.signedOut) = empty.authorizeWithoutParking(epoch: 0, needsAuthorization: true) else {
            Issue.record("expected a failure after a sign-out")
            return
        }
    }

    @Test func withoutACredentialTheFirstRequestRefreshes() {
        var machine = Self.machine(nil)
        guard
            case .parkAndRefresh(let flight, nil) = machine.authorize(
                request: 7, epoch: 0, needsAuthorization: true, waiter: "w", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        #expect(flight.fromVersion == 0 && flight.trigger == 7)
    }

    @Test func aFailedRefreshFailsItsWaitersAndTheRequestsQueuedBeforeIt() {
        var machine = Self.machine()
        let epoch = machine.failureEpoch
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        guard
            case .settle(["w0"], 1, .refreshTimedOut(.seconds(30))?) = machine.refreshFailed(
                flight, .refreshTimedOut(after: .seconds(30)))
        else {
            Issue.record("expected the waiter to fail")
            return
        }
        #expect(machine.refresh == .failed && machine.lastFailure == .refreshTimedOut(after: .seconds(30)))
        guard
            case .fail(.refreshTimedOut) = machine.authorize(
                request: 1, epoch: epoch, needsAuthorization: true, waiter: "w1", now: .zero)
        else {
            Issue.record("a request queued before the failure fails with it")
            return
        }
        // A request queued after it goes out with the credential that is still current.
        guard
            case .send("t1", 1) = machine.authorize(
                request: 2, epoch: machine.failureEpoch, needsAuthorization: true, waiter: "w2", now: .zero)
        else {
            Issue.record("expected a send")
            return
        }
    }

    @Test func aRequestWithoutAuthorizationNeverParks() {
        var machine = Self.machine()
        _ = machine.rejected(request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        guard
            case .send(nil, _) = machine.authorize(
                request: 1, epoch: 0, needsAuthorization: false, waiter: "w1", now: .zero)
        else {
            Issue.record("expected a send without credential")
            return
        }
        #expect(machine.parkedCount == 1)
    }

    @Test func aRequestOutOfAttemptsStartsTheRefreshButDoesNotPark() {
        var machine = Self.machine()
        guard case .parkAndRefresh = machine.rejected(request: 0, sentVersion: 1, waiter: nil, now: .zero) else {
            Issue.record("expected a refresh")
            return
        }
        #expect(machine.parkedCount == 0)
    }

    // MARK: - Credentials from outside

    /// A refresh running at a sign-in is cancelled, and its late result never overwrites the
    /// newer credential.
    @Test func signInReplacesARunningRefreshAndItsLateResultIsDiscarded() {
        var machine = Self.machine()
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        let action = machine.signIn("fresh")
        #expect(action?.cancelledRefresh == flight)
        #expect(action?.waiters == ["w0"] && action?.failure == nil && action?.version == 2)
        guard case .discard = machine.refreshSucceeded(flight, with: "stale") else {
            Issue.record("a stale refresh must be discarded")
            return
        }
        #expect(machine.credential == "fresh" && machine.version == 2 && machine.refresh == .idle)
    }

    @Test func signOutFailsParkedQueuedAndLaterRequestsButNotAnonymousOnes() {
        var machine = Self.machine()
        let epoch = machine.failureEpoch
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        let action = machine.signOut()
        #expect(action?.cancelledRefresh == flight && action?.waiters == ["w0"] && action?.failure == .signedOut)
        guard
            case .fail(.signedOut) = machine.authorize(
                request: 1, epoch: epoch, needsAuthorization: true, waiter: "w", now: .zero)
        else {
            Issue.record("expected signedOut")
            return
        }
        let authorized = machine.refusal(needsAuthorization: true)
        let anonymous = machine.refusal(needsAuthorization: false)
        #expect(authorized == .signedOut && anonymous == nil)
        guard
            case .send(nil, _) = machine.authorize(
                request: 3, epoch: epoch, needsAuthorization: false, waiter: "w", now: .zero)
        else {
            Issue.record("expected an anonymous send")
            return
        }
        guard case .discard = machine.refreshFailed(flight, .refreshFailed(RefreshError(error: Late()))) else {
            Issue.record("expected a discard")
            return
        }
        _ = machine.signIn("t9")
        let afterSignIn = machine.refusal(needsAuthorization: true)
        #expect(afterSignIn == nil)
        guard
            case .send("t9", 2) = machine.authorize(
                request: 4, epoch: machine.failureEpoch, needsAuthorization: true, waiter: "w", now: .zero)
        else {
            Issue.record("expected a send with the new credential")
            return
        }
    }

    @Test func shutdownCancelsTheRefreshAndFailsTheParkedRequests() {
        var machine = Self.machine()
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 0, sentVersion: 1, waiter: "w0", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        let action = machine.shutdown()
        #expect(action?.cancelledRefresh == flight && action?.waiters == ["w0"] && action?.failure == .shutDown)
        let again = machine.shutdown()
        let signIn = machine.signIn("x")
        #expect(again == nil && signIn == nil)
    }

    // MARK: - The refresh window

    @Test func theWindowRefusesTheRefreshBeyondItsLimitAndAllowsOneAfterThePeriod() {
        var machine = Self.machine(window: (maxRefreshes: 2, period: .seconds(10)))
        var version = 1
        for second in [0, 1] {
            guard
                case .parkAndRefresh(let flight, _) = machine.rejected(
                    request: 0, sentVersion: version, waiter: "w", now: .seconds(second))
            else {
                Issue.record("expected a refresh")
                return
            }
            _ = machine.refreshSucceeded(flight, with: "t\(version + 1)")
            version += 1
        }
        let epoch = machine.failureEpoch
        guard
            case .fail(.refreshWindowExceeded(2, .seconds(10))) = machine.rejected(
                request: 1, sentVersion: version, waiter: "w", now: .seconds(5))
        else {
            Issue.record("expected the window to refuse")
            return
        }
        #expect(machine.parkedCount == 0)
        guard
            case .fail(.refreshWindowExceeded) = machine.authorize(
                request: 2, epoch: epoch, needsAuthorization: true, waiter: "w", now: .seconds(5))
        else {
            Issue.record("requests queued before the refusal fail with it")
            return
        }
        // At 10 s the refresh of 0 s has left the window.
        guard case .parkAndRefresh = machine.rejected(request: 3, sentVersion: version, waiter: "w", now: .seconds(10))
        else {
            Issue.record("expected refreshes to resume")
            return
        }
    }

    @Test func signInEmptiesTheWindow() {
        var machine = Self.machine(window: (maxRefreshes: 1, period: .seconds(60)))
        guard
            case .parkAndRefresh(let flight, _) = machine.rejected(request: 0, sentVersion: 1, waiter: "w", now: .zero)
        else {
            Issue.record("expected a refresh")
            return
        }
        _ = machine.refreshSucceeded(flight, with: "t2")
        _ = machine.signIn("t3")
        guard case .parkAndRefresh = machine.rejected(request: 1, sentVersion: 3, waiter: "w", now: .seconds(1)) else {
            Issue.record("expected a refresh after the sign-in")
            return
        }
    }
}

private struct Late: Error {}

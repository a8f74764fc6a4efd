import Conductor
import Testing

/// The refresh invariant, stated once for every gate test. Change it here, and only here,
/// when the gate learns new ways to change its credential.
///
/// Over a whole run, once every refresh has ended:
/// 1. At most one refresh runs at a time (so never two of one version), and every refresh
///    that started ended — succeeded, failed, or was cancelled by a sign-in, sign-out or
///    shutdown.
/// 2. Every version gained came from one successful refresh or one sign-in:
///    `credentialVersion − startVersion == succeeded + signIns`.
/// 3. No request goes out with a credential while a refresh replacing it runs: between
///    `refreshStarted(fromVersion: v)` and that refresh's end, no `running` carries version v
///    (the journal records both in the transition that made them, so its order is theirs).
/// 4. `succeeded ≤ tokensIssued ≤ started`. Every success installed a token the server
///    issued; but a refresh abandoned at its deadline may still have had its token issued,
///    late, and the gate discards that token — so a server may issue more tokens than the
///    gate used, never more than refreshes started. With no failed refresh the three are
///    equal.
/// 5. A request goes out only with the credential the gate holds at that moment: every
///    `running` that carries a credential (version > 0) carries the newest version, and none
///    goes out between a sign-out and the next sign-in.
/// 6. A stale refresh never overwrites a newer credential: a `refreshSucceeded(version: v)`
///    ends the one running refresh, which started from v − 1, with no sign-in or sign-out
///    since (either would have cancelled it), so v is exactly one past the version held.
enum RefreshInvariant {
    static func check(
        _ events: [GateEvent], startVersion: Int, credentialVersion: Int, tokensIssued: Int, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var open: [Int: Int] = [:]
        var started = 0
        var succeeded = 0
        var signIns = 0
        var staleSends = 0
        var current = startVersion
        var signedOut = false
        for event in events {
            switch event {
            case .running(let request, let attempt, let version) where version > 0:
                let held = signedOut ? "no credential (signed out)" : "v\(current)"
                #expect(
                    version == current && !signedOut,
                    "\(context): #\(request) attempt \(attempt) went out with v\(version) while the gate held \(held)",
                    sourceLocation: sourceLocation)
            case .refreshSucceeded(let version):
                #expect(
                    version == current + 1 && open[current] == 1 && !signedOut,
                    "\(context): a refresh installed v\(version) over v\(current) (open: \(open))",
                    sourceLocation: sourceLocation)
                current = version
            case .signedIn(let version):
                current = version
                signedOut = false
            case .signedOut:
                signedOut = true
            default:
                break
            }
            switch event {
            case .refreshStarted(let version, _):
                started += 1
                open[version, default: 0] += 1
                #expect(
                    open[version] == 1, "\(context): two refreshes of v\(version) at once",
                    sourceLocation: sourceLocation)
                #expect(
                    open.values.reduce(0, +) == 1, "\(context): two refreshes at once \(open)",
                    sourceLocation: sourceLocation)
            case .refreshFailed(let version), .refreshCancelled(let version):
                open[version, default: 0] -= 1
            case .refreshSucceeded(let version):
                succeeded += 1
                open[version - 1, default: 0] -= 1
            case .signedIn:
                signIns += 1
            case .running(_, _, let version) where version > 0 && (open[version] ?? 0) > 0:
                staleSends += 1
            default:
                break
            }
        }
        #expect(
            staleSends == 0, "\(context): \(staleSends) send(s) with a credential a running refresh replaces",
            sourceLocation: sourceLocation)
        #expect(
            open.values.allSatisfy { $0 == 0 }, "\(context): unfinished refreshes \(open)",
            sourceLocation: sourceLocation)
        #expect(
            credentialVersion - startVersion == succeeded + signIns,
            "\(context): \(credentialVersion - startVersion) versions gained, \(succeeded) refreshes, \(signIns) sign-ins",
            sourceLocation: sourceLocation)
        #expect(
            succeeded <= tokensIssued && tokensIssued <= started,
            "\(context): \(tokensIssued) tokens issued for \(started) refreshes, \(succeeded) of them successful",
            sourceLocation: sourceLocation)
    }

    /// What still holds when the journal stopped early (a shutdown closes it, so refreshes
    /// that end later are not in it): every version gained was a token the server issued.
    static func checkWithoutJournal(
        startVersion: Int, credentialVersion: Int, tokensIssued: Int, context: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            credentialVersion - startVersion <= tokensIssued,
            "\(context): \(credentialVersion - startVersion) versions gained from \(tokensIssued) tokens issued",
            sourceLocation: sourceLocation)
    }

    /// Waits until no refresh is open and the scheduler is idle: the moment the invariant
    /// speaks of. (It waits for journal events, never polls.) It gives up when its task is
    /// cancelled (a test's time limit) or the journal ends (a shutdown): nothing more would
    /// come, and looping on an iterator that returns `nil` at once would pin a thread forever.
    static func settle(_ gate: RequestGate<String>) async {
        while !Task.isCancelled {
            try? await gate.whenIdle()
            let snapshot = gate.recordedEvents
            if openRefreshes(snapshot) == 0 { return }
            var events = gate.events.makeAsyncIterator()
            for _ in 0...snapshot.count {
                guard await events.next() != nil else { return }
            }
        }
    }

    static func openRefreshes(_ events: [GateEvent]) -> Int {
        events.reduce(0) { open, event in
            switch event {
            case .refreshStarted: open + 1
            case .refreshSucceeded, .refreshFailed, .refreshCancelled: open - 1
            default: open
            }
        }
    }
}

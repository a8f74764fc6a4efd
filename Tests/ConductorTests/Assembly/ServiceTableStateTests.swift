import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

private final class Widget: Sendable {}
private final class Gadget: Sendable {}

/// The state machine alone: no tasks, no locks.
@Suite struct ServiceTableStateTests {
    private let widget = ServiceKey(Widget.self, name: nil)
    private let gadget = ServiceKey(Gadget.self, name: nil)

    private func state(scope: ServiceScope = .singleton) -> ServiceTableState {
        var state = ServiceTableState()
        state.register(widget, ServiceRegistration(Widget.self, scope: scope, executor: nil) { _ in Widget() })
        state.register(gadget, ServiceRegistration(Gadget.self, scope: scope, executor: nil) { _ in Gadget() })
        return state
    }

    @Test func firstLookupCreatesLaterOnesWaitThenAllFind() {
        var state = state()
        guard case .createShared(_, let id, _) = state.lookup(widget, path: [], owner: nil) else {
            Issue.record("expected a creation")
            return
        }
        guard case .wait(_, let waited) = state.lookup(widget, path: [], owner: nil) else {
            Issue.record("expected a wait")
            return
        }
        #expect(waited == id)
        let instance = TypedServiceInstance(Widget())
        state.finish(widget, id, with: .success(instance))
        #expect(state.created(widget) === instance)
        guard case .found(let found) = state.lookup(widget, path: [], owner: nil) else {
            Issue.record("expected the instance")
            return
        }
        #expect(found === instance)
    }

    /// Created singletons of one type are kept apart by name: the unnamed one by its type alone
    /// (the hot path's one-word key), each named one by type and name. Re-registering one
    /// forgets only its own instance.
    @Test func createdInstancesOfOneTypeAreKeptApartByName() {
        var state = ServiceTableState()
        let keys = [widget, ServiceKey(Widget.self, name: "a"), ServiceKey(Widget.self, name: "b")]
        var instances: [ServiceInstance] = []
        for key in keys {
            state.register(key, ServiceRegistration(Widget.self, scope: .singleton, executor: nil) { _ in Widget() })
        }
        for key in keys {
            guard case .createShared(_, let id, _) = state.lookup(key, path: [], owner: nil) else {
                Issue.record("expected a creation of \(key)")
                return
            }
            let instance = TypedServiceInstance(Widget())
            state.finish(key, id, with: .success(instance))
            instances.append(instance)
        }
        for (key, instance) in zip(keys, instances) {
            #expect(state.created(key) === instance)
        }
        state.register(keys[1], ServiceRegistration(Widget.self, scope: .singleton, executor: nil) { _ in Widget() })
        #expect(state.created(keys[0]) === instances[0])
        #expect(state.created(keys[1]) == nil)
        #expect(state.created(keys[2]) === instances[2])
        state.register(keys[0], ServiceRegistration(Widget.self, scope: .singleton, executor: nil) { _ in Widget() })
        #expect(state.created(keys[0]) == nil)
        #expect(state.created(keys[2]) === instances[2])
        #expect(state.created(gadget) == nil)
    }

    @Test func failureLeavesTheServiceToBeCreatedAgain() {
        var state = state()
        guard case .createShared(_, let id, _) = state.lookup(widget, path: [], owner: nil) else {
            Issue.record("expected a creation")
            return
        }
        state.finish(widget, id, with: .failure(CancellationError()))
        #expect(state.created(widget) == nil)
        guard case .createShared = state.lookup(widget, path: [], owner: nil) else {
            Issue.record("expected a new creation")
            return
        }
    }

    @Test func waitThatClosesALoopOfWaitsIsACycle() {
        var state = state()
        guard case .createShared(_, let a, _) = state.lookup(widget, path: [], owner: nil),
            case .createShared(_, let b, _) = state.lookup(gadget, path: [], owner: nil)
        else {
            Issue.record("expected two creations")
            return
        }
        // Widget's creation waits for Gadget's …
        guard case .wait = state.lookup(gadget, path: [widget], owner: a) else {
            Issue.record("expected a wait")
            return
        }
        // … so Gadget's creation may not wait for Widget's.
        guard case .fail(let error) = state.lookup(widget, path: [gadget], owner: b) else {
            Issue.record("expected a cycle")
            return
        }
        #expect(error.path == ["\(Gadget.self)", "\(Widget.self)", "\(Gadget.self)"])
        // Once Widget's creation stops waiting, the same wait is fine.
        state.endWait(a, on: b)
        guard case .wait = state.lookup(widget, path: [gadget], owner: b) else {
            Issue.record("expected a wait")
            return
        }
    }

    @Test func transientIsCreatedInlineEveryTime() {
        var state = state(scope: .transient)
        for _ in 0..<2 {
            guard case .createInline = state.lookup(widget, path: [], owner: nil) else {
                Issue.record("expected an inline creation")
                return
            }
        }
    }
}

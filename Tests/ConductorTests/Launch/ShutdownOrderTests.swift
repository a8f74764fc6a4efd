import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// The shutdown's order as a pure value: no tasks, no clock.
@Suite struct ShutdownOrderTests {
    /// config ← pool ← cache (a chain through dependencies), and metrics on its own: cache and
    /// metrics first, together; then pool; then config.
    @Test func dependentsAreUndoneFirstAndIndependentOnesTogether() {
        var order = ShutdownOrder(
            succeeded: ["config", "metrics", "pool", "cache"],
            prerequisites: ["config": [], "metrics": [], "pool": ["config"], "cache": ["pool"]])
        #expect(order.start() == .undo(["cache", "metrics"]))
        #expect(order.undone("metrics") == .wait)
        #expect(order.undone("cache") == .undo(["pool"]))
        #expect(order.undone("pool") == .undo(["config"]))
        #expect(order.undone("config") == .finished)
    }

    /// A task that failed is not undone, but what depended on it through it still orders the
    /// undos: home ran after the failed version check, which ran after config.
    @Test func orderPassesThroughTasksThatAreNotUndone() {
        var order = ShutdownOrder(
            succeeded: ["config", "home"],
            prerequisites: ["config": [], "version": ["config"], "home": ["version"]])
        #expect(order.start() == .undo(["home"]))
        #expect(order.undone("home") == .undo(["config"]))
        #expect(order.undone("config") == .finished)
    }

    /// Readiness sets are prerequisites too: a task that waited for one is undone before every
    /// task of the set.
    @Test func readinessSetsOrderUndos() {
        var order = ShutdownOrder(
            succeeded: ["a", "b", "home"],
            prerequisites: ["a": [], "b": [], "ready": ["a", "b"], "home": ["ready"]])
        #expect(order.start() == .undo(["home"]))
        #expect(order.undone("home") == .undo(["b", "a"]))
        #expect(order.undone("a") == .wait)
        #expect(order.undone("b") == .finished)
    }

    @Test func nothingToUndoFinishesAtOnce() {
        var order = ShutdownOrder(succeeded: [], prerequisites: [:])
        #expect(order.start() == .finished)
    }
}

import ConductorTestKit
import Dispatch
import Logging
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

/// An observer's delivery task lives as long as there is something to deliver: it ends with
/// the run or launch, when its handle is cancelled, or when a launcher that never started is
/// released. `finished()` (a package hook) awaits its end, so a leak holds the test until
/// its time limit, which cancels the wait and fails it.
@Suite(.timeLimit(.minutes(1))) struct ObservationTests {
    /// Holds a handle for a callback that needs it, once `observe` has returned it.
    private final class HandleBox: Sendable {
        private let handle = Lock<ObservationHandle?>(nil)

        func set(_ value: ObservationHandle) { handle.withLock { $0 = value } }

        func cancel() { handle.withLock { $0 }?.cancel() }
    }

    // MARK: - Launcher

    @Test func anObserverOfALauncherThatNeverStartsEndsWhenTheLauncherIsReleased() async throws {
        let observer = RecordingObserver()
        var launcher: Launcher? = Launcher()
        weak let released = launcher
        try launcher?.add(TestStartupTask("never"))
        let handle = try #require(launcher?.observe(on: .immediate, observer))
        launcher = nil
        #expect(released == nil)
        #expect(await handle.finished())
        #expect(observer.heard.all.isEmpty)
    }

    @Test func aLauncherWithALoggerThatNeverStartsCanBeReleased() async throws {
        var launcher: Launcher? = Launcher(logger: .init(label: "test"))
        weak let released = launcher
        let handle = try #require(launcher?.observe(on: .immediate, RecordingObserver()))
        launcher = nil
        #expect(released == nil)
        #expect(await handle.finished())
    }

    /// Releasing a started launcher does not stop its launch, and its observers hear it out.
    @Test func anObserverHearsALaunchToItsEndAfterTheLauncherIsReleased() async throws {
        let observer = RecordingObserver()
        let hold = Latch()
        var launcher: Launcher? = Launcher()
        weak let released = launcher
        try launcher?.add(TestStartupTask("held") { await hold.wait() })
        let handle = try #require(launcher?.observe(on: .immediate, observer))
        try launcher?.start()
        launcher = nil
        #expect(released == nil)
        hold.open()
        #expect(await handle.finished())
        #expect(observer.heard.all == ["started held", "completed held", "finished completed"])
    }

    /// Cancelling stops delivery at once, even in the middle of a batch: an observer that
    /// subscribes after the launch has ended gets all of it in one batch, and cancels at the
    /// first task that started. The queue it is called on is held until the handle is stored.
    @Test func cancellingTheHandleStopsDeliveryInTheMiddleOfABatch() async throws {
        struct Cancelling: LaunchObserver {
            let heard: Recorder<String>
            let box: HandleBox
            func taskStarted(_ name: String) {
                heard.append(name)
                box.cancel()
            }
        }
        let launcher = Launcher()
        for name in ["a", "b", "c"] { try launcher.add(TestStartupTask(name, dependencies: [])) }
        try await launcher.run()
        let heard = Recorder<String>()
        let box = HandleBox()
        let queue = DispatchQueue(label: "observer")
        queue.suspend()
        let handle = launcher.observe(on: .queue(queue), Cancelling(heard: heard, box: box))
        box.set(handle)
        queue.resume()
        #expect(await handle.finished())
        #expect(heard.all.count == 1, "\(heard.all)")
    }

    // MARK: - GraphRun

    @Test func cancellingARunsObserverEndsItsDeliveryWhileTheRunGoesOn() async throws {
        let hold = Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in await hold.wait() }
        let run = try graph.start()
        let heard = Recorder<GraphEvent>()
        let handle = run.observe(on: .immediate) { event in heard.append(event) }
        await run.event { if case .taskStarted = $0 { true } else { false } }
        handle.cancel()
        #expect(await handle.finished())
        let heardAtCancel = heard.all.count
        hold.open()
        _ = try await run.report()
        #expect(heard.all.count == heardAtCancel)
    }

    @Test func aRunsObserverEndsWithTheRunAfterItsHandleIsReleased() async throws {
        let hold = Latch()
        var graph = TaskGraph()
        graph.add("held") { _ in await hold.wait() }
        var run: GraphRun? = try graph.start()
        let heard = Recorder<GraphEvent>()
        let handle = try #require(run?.observe(on: .immediate) { event in heard.append(event) })
        run = nil
        hold.open()
        #expect(await handle.finished())
        guard case .runFinished(.completed, _) = heard.all.last else {
            Issue.record("the observer did not hear the run finish: \(heard.all)")
            return
        }
    }
}

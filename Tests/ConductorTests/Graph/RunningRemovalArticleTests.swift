import ConductorTestKit
import Testing

@testable import ConductorGraph

/// The running-removal example of the "Changing a running graph" section of the
/// StagedSchedules article, its two snippets as the article writes them, against an `api` that
/// holds page 2 until the test has removed the task; the report is what the article says.
@Suite struct RunningRemovalArticleTests {
    /// Pages to prefetch; page 2 opens `loading` and waits for `release` before it returns.
    struct API: Sendable {
        let pages = Recorder<Int>()
        let rendered = Recorder<Bool>()
        let loading = Latch()
        let release = Latch()

        func prefetch(page: Int) async throws {
            pages.append(page)
            if page == 2 {
                loading.open()
                await release.wait()
            }
        }
        func render() async throws { rendered.append(true) }
    }

    @Test func removingTheRunningPrefetchCancelsItsBody() async throws {
        let api = API()
        // The article's first snippet.
        var feed = TaskGraph()
        feed.add("prefetch") { _ in
            for page in 1...10 {
                guard !Task.isCancelled else { break }
                try await api.prefetch(page: page)
            }
        }
        feed.add("render", dependsOn: ["prefetch"]) { _ in try await api.render() }
        let feedRun = try feed.start()
        // The user leaves while page 2 loads.
        await api.loading.wait()
        defer { api.release.open() }
        // The article's second snippet; the body is held in page 2 until it is removed.
        let removal = try feedRun.remove("prefetch")  // .stillRunning: its body is cancelled
        api.release.open()
        let feedReport = try await feedRun.report()
        // The check.
        #expect(removal == .stillRunning)
        #expect(api.pages.all == [1, 2])
        #expect(api.rendered.all.isEmpty)
        #expect(feedReport["prefetch"]?.outcome.kind == .cancelled)
        #expect(feedReport["prefetch"]?.wasRemoved == true)
        #expect(feedReport["render"]?.outcome.kind == .skipped(dependency: "prefetch"))
        #expect(feedReport.outcome == .completed)
    }
}

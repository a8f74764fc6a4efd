import ConductorTestKit
import Testing

@testable import ConductorGraph

/// The examples of the "Shared limits" and "Pausing a run" sections of the StagedSchedules
/// article, as the article writes them, against an `api` that counts the pages written at once.
@Suite struct SharedLimitsArticleTests {
    struct API: Sendable {
        let gauge = LimitGauge(limits: 1)
        let cleanedUp = Recorder<Bool>()

        func saveThumbnails(page: Int) async throws {
            gauge.enter([0])
            for _ in 0..<5 { await Task.yield() }
            gauge.leave([0])
        }
        func cleanUp() async throws { cleanedUp.append(true) }
    }

    @Test func twoRunsWriteAtMostTwoPagesAtOnce() async throws {
        let api = API()
        // The article's example.
        let disk = TaskLimit(2, name: "disk")
        var thumbnails = TaskGraph()
        for page in 0..<10 {
            thumbnails.add("page\(page)", options: TaskOptions(limits: [disk])) { _ in
                try await api.saveThumbnails(page: page)
            }
        }
        let pages = thumbnails  // a constant, so both runs can share it
        async let first = pages.run()
        async let second = pages.run()
        let thumbnailReports = try await [first, second]
        // The check.
        #expect(thumbnailReports.allSatisfy { $0.isSuccess })
        #expect(api.gauge.most[0] <= 2)
        #expect(disk.snapshot == (0, 0))
    }

    @Test func aPausedRunGoesOnAfterTheResume() async throws {
        let api = API()
        let disk = TaskLimit(2, name: "disk")
        var thumbnails = TaskGraph()
        for page in 0..<10 {
            thumbnails.add("page\(page)", options: TaskOptions(limits: [disk])) { _ in
                try await api.saveThumbnails(page: page)
            }
        }
        // The article's example.
        let background = try thumbnails.start()
        background.pause()  // the user scrolls: nothing new starts
        try background.add("cleanUp") { _ in try await api.cleanUp() }
        background.resume()  // the scrolling stopped
        let backgroundReport = try await background.report()
        // The check.
        #expect(backgroundReport.isSuccess)
        #expect(backgroundReport.tasks.count == 11)
        #expect(api.cleanedUp.all == [true])
    }
}

import ConductorTestKit
import Testing

@testable import ConductorGraph

/// The two examples of the "Loops and conditions" section of the StagedSchedules article, as
/// the article writes them, against an `api` of canned answers; the report's outcomes are
/// what the article says.
@Suite struct LoopsAndConditionsArticleTests {
    struct CommentPage: Sendable {
        var comments: [String]
        var next: String?
    }

    /// Three pages of comments; `onPage` sees each cursor asked for before its page is
    /// returned. Prefers the compact layout or not.
    struct API: Sendable {
        var prefersCompact = true
        var onPage: @Sendable (String?) async -> Void = { _ in }
        let layouts = Recorder<String>()

        func comments(after cursor: String?) async throws -> CommentPage {
            await onPage(cursor)
            switch cursor {
            case nil: return CommentPage(comments: ["a", "b"], next: "p2")
            case "p2": return CommentPage(comments: ["c"], next: "p3")
            default: return CommentPage(comments: ["d"], next: nil)
            }
        }
        func prefersCompactLayout() async throws -> Bool { prefersCompact }
        func compactLayout() async throws { layouts.append("compact") }
        func fullLayout() async throws { layouts.append("full") }
    }

    // MARK: - A loop inside a body

    @Test func theLoopReadsEveryPageInOneTask() async throws {
        let asked = Recorder<String?>()
        let api = API(onPage: { asked.append($0) })
        // The article's example.
        var comments = TaskGraph()
        comments.add("comments") { _ in
            var all: [String] = []
            var cursor: String? = nil
            repeat {
                try Task.checkCancellation()
                let page = try await api.comments(after: cursor)
                all += page.comments
                cursor = page.next
            } while cursor != nil
            return all
        }
        // The check.
        let run = try comments.start()
        let report = try await run.report()
        #expect(report.outcome == .completed)
        #expect(report["comments"]?.outcome.kind == .succeeded)
        #expect(report["comments"]?.attempts == 1)
        #expect(asked.all == [nil, "p2", "p3"])
    }

    /// "A cancelled run stops it between pages": cancelled while the second page loads, the
    /// loop asks for no third.
    @Test func aCancelledRunStopsTheLoopBetweenPages() async throws {
        let asked = Recorder<String?>()
        let secondPageAsked = Latch()
        let resume = Latch()
        let api = API(onPage: { cursor in
            asked.append(cursor)
            if cursor == "p2" {
                secondPageAsked.open()
                await resume.wait()
            }
        })
        var comments = TaskGraph()
        comments.add("comments") { _ in
            var all: [String] = []
            var cursor: String? = nil
            repeat {
                try Task.checkCancellation()
                let page = try await api.comments(after: cursor)
                all += page.comments
                cursor = page.next
            } while cursor != nil
            return all
        }
        let run = try comments.start()
        await secondPageAsked.wait()
        run.cancel()
        resume.open()
        let report = try await run.report()
        #expect(report.outcome == .cancelled)
        #expect(report["comments"]?.outcome.kind == .cancelled)
        #expect(asked.all == [nil, "p2"])
    }

    // MARK: - A task choosing between branches

    @Test(arguments: [true, false])
    func theChooserRemovesTheBranchItDoesNotTake(prefersCompact: Bool) async throws {
        let api = API(prefersCompact: prefersCompact)
        // The article's example.
        var layout = TaskGraph()
        layout.add("chooseLayout") { context in
            let compact = try await api.prefersCompactLayout()
            try context.run.remove(compact ? "fullLayout" : "compactLayout")
            return compact
        }
        layout.add("compactLayout", dependsOn: ["chooseLayout"]) { _ in try await api.compactLayout() }
        layout.add("fullLayout", dependsOn: ["chooseLayout"]) { _ in try await api.fullLayout() }
        let layoutReport = try await layout.run()
        // The check: what the article says the report shows.
        let (taken, notTaken) = prefersCompact ? ("compactLayout", "fullLayout") : ("fullLayout", "compactLayout")
        #expect(layoutReport.outcome == .completed)
        #expect(layoutReport[taken]?.outcome.kind == .succeeded)
        #expect(layoutReport[notTaken]?.outcome.kind == .cancelled)
        #expect(layoutReport[notTaken]?.startedAt == nil, "it never ran")
        #expect(layoutReport[taken].map { "\($0)" } == "\(taken): succeeded")
        #expect(layoutReport[notTaken].map { "\($0)" } == "\(notTaken): cancelled")
        #expect(api.layouts.all == [prefersCompact ? "compact" : "full"])
    }
}

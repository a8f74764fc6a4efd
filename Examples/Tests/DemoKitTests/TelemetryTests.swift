import Testing

@testable import DemoKit

/// The demo shows what a tracer and a metrics backend receive: one request's span tree and
/// the metrics table.
@Suite struct TelemetryTests {
    // MARK: - From a run

    /// In the token-expiry story the request shown is the one whose rejection started the
    /// refresh: the page task's span, the gate's `GET` under it (parked, then sent again with
    /// the new credential, linked to the refresh), and the refresh under that.
    @Test func theSpanTreeShowsTheRequestThatStartedTheRefresh() async throws {
        let report = try await runDemo(DemoOptions(scenario: .tokenExpiry, seed: 7, latencyScale: 0.1))
        let tree = report.spanTree
        #expect(tree.ancestors == ["graph.run"])
        let task = try #require(tree.root)
        let taskID = try #require(task.attributes.first { $0.key == "conductor.task.id" }?.value)
        #expect(task.name == taskID)
        let request = try #require(task.children.first { $0.name == "GET" })
        #expect(request.events.first == "initial")
        #expect(request.events.contains { $0.hasPrefix("redirect") })
        #expect(request.events.filter { $0.hasPrefix("running") }.count >= 2)
        #expect(request.links >= 1)
        #expect(request.attributes.contains { $0 == ("http.response.status_code", "200") })
        #expect(request.children.map(\.name) == ["gate.refresh"])

        let text = TelemetryText.render(tree)
        let lines = text.split(separator: "\n")
        #expect(lines.first == "  graph.run")
        #expect(lines.contains { $0.contains("└─ \(taskID)  ") })
        #expect(lines.contains { $0.contains("└─ GET  ") })
        #expect(lines.contains { $0.contains("└─ gate.refresh  ") })
        #expect(lines.count < 25 && lines.allSatisfy { $0.count <= 100 }, "\(text)")

        let refreshes = report.metrics.filter { $0.name == "conductor_gate_refreshes_total" }
        #expect(
            refreshes == [
                MetricRow(
                    name: "conductor_gate_refreshes_total", type: "counter", dimensions: "outcome=succeeded", value: "1"
                )
            ])
        #expect(
            report.metrics.contains {
                $0.name == "conductor_graph_runs_total" && $0.dimensions == "kind=graph outcome=completed"
            })
        #expect(
            report.metrics.contains {
                $0.name == "conductor_graph_runs_total" && $0.dimensions == "kind=launch outcome=completed"
            })
        #expect(TelemetryText.render(report.metrics).split(separator: "\n").count == report.metrics.count)
    }

    /// Offline, the page's first call is shown: tried, retried, answered from the cache. The
    /// visit of the day before, which filled the cache, is not traced.
    @Test func offlineTheFirstCallShowsItsFallBackToTheCache() async throws {
        let report = try await runDemo(DemoOptions(scenario: .offlineWithCache, seed: 7, latencyScale: 0.1))
        let task = try #require(report.spanTree.root)
        #expect(task.name == "basicInfo")
        let request = try #require(task.children.first { $0.name == "GET" })
        #expect(request.events.last == "use-cache")
        #expect(request.attributes.contains { $0 == ("conductor.gate.outcome", "cache") })
        let runs = report.metrics.filter { $0.name == "conductor_graph_runs_total" }
        #expect(runs.map(\.value) == ["1", "1"], "one launch and one page: yesterday's visit is not counted")
    }

    // MARK: - Rendering

    @Test func aTreeIsDrawnWithItsAncestorsAttributesEventsAndErrors() {
        let refresh = SpanTree.Node(
            name: "gate.refresh", duration: .milliseconds(20), attributes: [("conductor.gate.outcome", "failed")],
            events: [], links: 0, error: "the token server answered 403", children: [])
        let request = SpanTree.Node(
            name: "GET", duration: .milliseconds(40), attributes: [("http.request.method", "GET")],
            events: ["initial", "redirect(credential_version=1)"], links: 1, error: "", children: [refresh])
        let tree = SpanTree(
            root: SpanTree.Node(
                name: "price", duration: .milliseconds(41), attributes: [], events: [], links: 0, error: nil,
                children: [request]),
            ancestors: ["graph.run"], spanCount: 3)
        #expect(
            TelemetryText.render(tree) == """
                  graph.run
                  └─ price  41 ms
                     └─ GET  40 ms  ERROR
                           http.request.method=GET
                           events: initial, redirect(credential_version=1)
                           links: 1 (the refresh that released it)
                        └─ gate.refresh  20 ms  ERROR: the token server answered 403
                              conductor.gate.outcome=failed
                """)
        #expect(TelemetryText.render(SpanTree(root: nil, ancestors: [], spanCount: 0)) == "  (no spans recorded)")
    }

    @Test func longAttributeListsWrap() {
        let items = (1...12).map { "conductor.attribute\($0)=value" }
        let lines = TelemetryText.wrap(items, first: "   ", rest: "   ", width: 80)
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines.joined(separator: " ").split(separator: " ").map(String.init) == items)
    }
}

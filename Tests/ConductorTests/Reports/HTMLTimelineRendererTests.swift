import Foundation
import Testing

@testable import ConductorAssembly
@testable import ConductorCore
@testable import ConductorGate
@testable import ConductorGraph
@testable import ConductorHarmonizer
@testable import ConductorLaunch
@testable import ConductorReports

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The page `HTMLTimelineRenderer` draws of a report: well-formed, a bar per task, the
/// milestones and the axis, and nothing loaded from outside.
@Suite struct HTMLTimelineRendererTests {
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            elements.append((elementName, attributeDict))
        }
    }

    private func elements(of html: String) throws -> [(name: String, attributes: [String: String])] {
        let parser = XMLParser(data: Data(html.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")
        return collector.elements
    }

    private func report() throws -> RunReport {
        try JSONDecoder().decode(
            RunReport.self, from: Data(contentsOf: RunReportCodingTests.fixture("run-report-1.0.json")))
    }

    @Test func aReportIsDrawnWithABarPerTaskTheMilestonesAndTheAxis() throws {
        let report = try report()
        let html = HTMLTimelineRenderer().render(report, title: "launch <1>")
        let elements = try elements(of: html)
        let tasks = elements.filter { $0.name == "g" && ($0.attributes["class"] ?? "").hasPrefix("task") }
        // Grouped by stage: promo, of stage extras, comes after the tasks of no stage.
        #expect(
            tasks.compactMap { $0.attributes["data-task"] } == [
                "channel", "config", "version", "home", "sku", "feed", "promo",
            ])
        #expect(report.tasks.count == 7)
        let bars = elements.filter { $0.name == "rect" && $0.attributes["class"] == "bar" }
        #expect(bars.count == report.tasks.count)
        // Colour by outcome; the critical path's tasks marked.
        #expect(bars.map { $0.attributes["fill"] }.filter { $0 == TimelineChart.Outcome.failed.colour }.count == 2)
        #expect(
            tasks.filter { $0.attributes["class"] == "task critical" }.compactMap { $0.attributes["data-task"] }
                == report.criticalPath)
        // config waited 50 ms for a worker after channel ended (the legend's swatch aside).
        let chart = try #require(elements.firstIndex { $0.attributes["class"] == "gantt" })
        let waits = elements[chart...].filter { $0.name == "rect" && $0.attributes["class"] == "wait queued" }
        #expect(waits.count == 1)
        let milestones = elements.filter { $0.name == "g" && $0.attributes["class"] == "marker milestone" }
        #expect(milestones.compactMap { $0.attributes["data-name"] } == ["firstScreen"])
        let top = try #require(elements.firstIndex { $0.name == "g" && $0.attributes["class"] == "axis top" })
        let ticks = elements[(top + 1)...].prefix { $0.attributes["class"] == "tick-label" }
        #expect(ticks.count >= 2 && ticks.count <= 11)
        #expect(html.contains("<title>launch &lt;1&gt;</title>"))
        #expect(html.contains(#"<p class="verdict pass">"#))
    }

    @Test func thePageLoadsNothingFromOutside() throws {
        let html = HTMLTimelineRenderer().render(try report())
        for element in try elements(of: html) {
            for name in ["src", "href", "xlink:href"] {
                #expect(element.attributes[name] == nil)
            }
            #expect(!["link", "script", "img", "iframe"].contains(element.name))
        }
        #expect(!html.contains("url("))
        #expect(!html.contains("@import"))
    }

    // MARK: - Legend

    /// Each wait's swatch is drawn as its waits are: the same class (the pale overlay) and
    /// outline over the colour of a bar that has such a wait, not a grey square of its own.
    @Test func aWaitsSwatchLooksLikeItsWaits() throws {
        let parked = TimelineChart.Wait.Kind(name: "parked here", label: "parked", outline: "#6f42c1")
        let chart = TimelineChart(
            title: "waits",
            rows: [
                .init(
                    group: "calls", name: "a", start: .zero, end: .milliseconds(10), outcome: .succeeded,
                    waits: [.init(kind: .queued, start: .zero, end: .milliseconds(2))]),
                .init(
                    group: "calls", name: "b", start: .zero, end: .milliseconds(10), outcome: .failed,
                    waits: [.init(kind: parked, start: .milliseconds(1), end: .milliseconds(4))]),
            ])
        let html = HTMLTimelineRenderer().render(chart)
        let elements = try elements(of: html)
        let swatches = elements.indices.filter {
            elements[$0].name == "svg" && elements[$0].attributes["class"] == "swatch"
        }
        let chartStart = try #require(elements.firstIndex { $0.attributes["class"] == "gantt" })
        let expected = [("wait queued", TimelineChart.Outcome.succeeded), ("wait parked-here", .failed)]
        try #require(swatches.count == expected.count)
        for (swatch, (waitClass, outcome)) in zip(swatches, expected) {
            let (bar, overlay) = (elements[swatch + 1], elements[swatch + 2])
            #expect(bar.name == "rect" && bar.attributes["fill"] == outcome.colour)
            let drawn = try #require(elements[chartStart...].first { $0.attributes["class"] == waitClass })
            #expect(overlay.name == "rect")
            for attribute in ["class", "stroke", "stroke-dasharray"] {
                #expect(overlay.attributes[attribute] == drawn.attributes[attribute], "\(attribute) of \(waitClass)")
            }
        }
        #expect(elements[swatches[1] + 2].attributes["stroke"] == "#6f42c1")
        // The overlay's look is the page's one `.wait` rule, which applies to the legend too.
        #expect(html.contains("\n.wait { fill: #fff; fill-opacity: 0.55;"))
        #expect(!html.contains("background:#e1e4e8"))
    }

    @Test(arguments: [(0.5, 0.05), (3.0, 0.5), (1200.0, 200.0), (9_000.0, 1000.0), (10.0, 1.0)])
    func ticksAreRoundAndAtMostTen(total: Double, step: Double) {
        #expect(HTMLTimelineRenderer.tickStep(total) == step)
    }
}

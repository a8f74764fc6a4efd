import DemoKit
import Foundation
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `timeline.html` is well-formed XML, draws one bar per task, marks the milestones and the
/// refresh, and loads nothing from outside.
@Suite struct TimelineHTMLTests {
    /// Collects the elements of a parsed document with their attributes.
    final class Collector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            elements.append((elementName, attributeDict))
        }
    }

    @Test func theTimelineIsWellFormedWithABarPerTaskAndTheMarkers() async throws {
        let report = try await runDemo(DemoOptions(scenario: .tokenExpiry, seed: 3, latencyScale: 0.1))
        let html = TimelineHTML.render(report)

        let parser = XMLParser(data: Data(html.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "not well-formed: \(String(describing: parser.parserError))")

        let bars = collector.elements.filter { $0.name == "rect" && $0.attributes["class"] == "bar" }
        #expect(bars.count == report.timeline.rows.count)
        let tasks = collector.elements.filter { $0.name == "g" && $0.attributes["class"] == "task" }
        #expect(Set(tasks.compactMap { $0.attributes["data-task"] }) == Set(report.timeline.rows.map(\.name)))

        let markers = collector.elements.filter { $0.name == "g" && ($0.attributes["class"] ?? "").hasPrefix("marker") }
        let milestones = markers.filter { $0.attributes["class"] == "marker milestone" }.compactMap {
            $0.attributes["data-name"]
        }
        #expect(milestones == ["firstScreen", "fullPage"])
        #expect(markers.filter { $0.attributes["class"] == "marker refresh" }.count == 1)
        #expect(collector.elements.contains { $0.name == "svg" })
        #expect(collector.elements.filter { $0.name == "title" }.count >= bars.count)

        // The calls parked behind the refresh are drawn waiting.
        let parked = collector.elements.filter { $0.name == "rect" && $0.attributes["class"] == "wait parked" }
        #expect(parked.count >= report.network.parked)
        #expect(report.network.parked > 0)

        // The time axis at the top and at the bottom, with the same ticks.
        // The chart, not a legend's swatch.
        let svg = try #require(collector.elements.first { $0.name == "svg" && $0.attributes["class"] == "gantt" })
        let topAxis = try #require(
            collector.elements.firstIndex { $0.name == "g" && $0.attributes["class"] == "axis top" })
        let bottomAxis = try #require(
            collector.elements.firstIndex { $0.name == "g" && $0.attributes["class"] == "axis bottom" })
        let topTicks = collector.elements[(topAxis + 1)..<bottomAxis].filter { $0.attributes["class"] == "tick-label" }
        let bottomTicks = collector.elements[(bottomAxis + 1)...].prefix { $0.attributes["class"] == "tick-label" }
        #expect(topTicks.count >= 2 && topTicks.count == bottomTicks.count)
        #expect(topTicks.map { $0.attributes["x"] } == bottomTicks.map { $0.attributes["x"] })
        let topY = Double(topTicks.first?.attributes["y"] ?? "") ?? .infinity
        let firstBarY = bars.compactMap { Double($0.attributes["y"] ?? "") }.min() ?? 0
        #expect(topY < firstBarY)

        // It scales to the page's width instead of a fixed size.
        #expect(svg.attributes["width"] == "100%")
        #expect(svg.attributes["height"] == nil)
        #expect(svg.attributes["viewBox"]?.hasPrefix("0 0 ") == true)
        #expect(html.contains(".gantt { display: block; width: 100%;"))
    }

    @Test func theTimelineLoadsNothingFromOutside() async throws {
        let report = try await runDemo(DemoOptions(scenario: .normal, seed: 3, latencyScale: 0.1))
        let html = TimelineHTML.render(report)
        let parser = XMLParser(data: Data(html.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse())
        for element in collector.elements {
            for name in ["src", "href", "xlink:href"] {
                let value = element.attributes[name] ?? ""
                #expect(!value.hasPrefix("http://") && !value.hasPrefix("https://") && !value.hasPrefix("//"))
            }
            #expect(element.name != "link")
            #expect(element.name != "script")
            #expect(element.name != "img" && element.name != "iframe")
        }
        #expect(!html.contains("url("))
        #expect(!html.contains("@import"))
    }
}

/// What the tracer and the metrics backend received, as text: one request's span tree and a
/// table of the metrics.
public enum TelemetryText {
    /// The span tree, one span a line, with its attributes and events below it.
    ///
    /// ```
    /// graph.run
    /// └─ saleInfo  212 ms  conductor.task.attempt=1 conductor.task.outcome=succeeded …
    ///    └─ GET  204 ms  conductor.gate.outcome=succeeded http.response.status_code=200 …
    ///       events: initial, running(attempt=1 credential_version=1), redirect(…), …
    /// ```
    public static func render(_ tree: SpanTree) -> String {
        guard let root = tree.root else { return "  (no spans recorded)" }
        var lines: [String] = []
        var indent = "  "
        for name in tree.ancestors {
            lines.append(indent + name)
            indent += "  "
        }
        func draw(_ node: SpanTree.Node, _ prefix: String, _ childPrefix: String) {
            var head = "\(prefix)\(node.name)  \(node.duration.shortDescription)"
            if let error = node.error { head += error.isEmpty ? "  ERROR" : "  ERROR: \(error)" }
            lines.append(head)
            let indent = childPrefix + "   "
            lines += wrap(node.attributes.map { "\($0.key)=\($0.value)" }, first: indent, rest: indent)
            lines += wrap(node.events.map { $0 + "," }, first: indent + "events: ", rest: indent + "        ")
            if node.links > 0 { lines.append(indent + "links: \(node.links) (the refresh that released it)") }
            for (index, child) in node.children.enumerated() {
                let last = index == node.children.count - 1
                draw(child, childPrefix + (last ? "└─ " : "├─ "), childPrefix + (last ? "   " : "│  "))
            }
        }
        let lead = tree.ancestors.isEmpty ? indent : String(indent.dropLast(2)) + "└─ "
        draw(root, lead, String(repeating: " ", count: lead.count))
        return lines.joined(separator: "\n")
    }

    /// `items` joined by spaces into lines of at most `width` characters (an item longer than
    /// that gets a line of its own).
    static func wrap(_ items: [String], first: String, rest: String, width: Int = 100) -> [String] {
        var lines: [String] = []
        var line = first
        var empty = true
        for item in items {
            if !empty && line.count + 1 + item.count > width {
                lines.append(line)
                line = rest
                empty = true
            }
            line += (empty ? "" : " ") + item
            empty = false
        }
        if !empty { lines.append(line) }
        // A list of events ends without its separator.
        if let last = lines.last, last.hasSuffix(","), items.last?.hasSuffix(",") == true {
            lines[lines.count - 1] = String(last.dropLast())
        }
        return lines
    }

    /// The metrics as a table: name, type, dimensions, value.
    public static func render(_ rows: [MetricRow]) -> String {
        guard !rows.isEmpty else { return "  (no metrics recorded)" }
        let nameWidth = rows.map(\.name.count).max()! + 2
        let dimensionWidth = rows.map(\.dimensions.count).max()! + 2
        return rows.map { row in
            "  " + TextTimeline.pad(row.name, nameWidth) + TextTimeline.pad(row.type, 9)
                + TextTimeline.pad(row.dimensions, dimensionWidth) + row.value
        }.joined(separator: "\n")
    }
}

public import Logging

extension GraphRun {
    /// Logs every event of the run, from its first, through `logger`; see ``GraphEventLogger``.
    ///
    /// ```swift
    /// let run = try graph.start()
    /// run.log(to: Logger(label: "app.graph"))
    /// ```
    public func log(to logger: Logger) {
        let sink = GraphEventLogger(logger)
        storage.deliver(from: 0, on: .immediate) { event in sink.log(event) }
    }
}

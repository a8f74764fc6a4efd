public import ConductorGraph

extension GraphEventLogger {
    /// Logs a launch's report as its run's one line (see ``log(_:)-(RunReport)``); a shutdown's
    /// undos are the shutdown report's to log.
    ///
    /// ```swift
    /// GraphEventLogger(logger).log(try await launcher.report())
    /// ```
    public func log(_ report: LaunchReport) {
        log(report.run)
    }
}

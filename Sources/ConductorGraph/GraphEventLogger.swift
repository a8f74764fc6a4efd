public import Logging

/// Writes the events and reports of runs and launches as structured swift-log lines.
///
/// ```swift
/// let logger = Logger(label: "app.launch")
/// let launcher = Launcher(logger: logger)            // every event, as it happens
/// run.log(to: logger)                                // the same for a plain graph run
/// GraphEventLogger(logger).log(try await run.report())   // one summary line
/// ```
///
/// Messages are fixed ("task started", "task failed"); the task, attempt, time in
/// microseconds and error go in metadata, so log backends can index them. Conductor logs
/// nothing unless you hand it a `Logger`.
public struct GraphEventLogger: Sendable {
    private let logger: Logger

    public init(_ logger: Logger) {
        self.logger = logger
    }

    /// Logs one event: task starts and queueing at `debug`, successes and milestones at
    /// `info`, retries, skips and cancellations at `notice`, failures at `error`.
    public func log(_ event: GraphEvent) {
        var metadata: Logger.Metadata = ["at_us": "\(event.time.microseconds)"]
        if let id = event.taskID { metadata["task"] = "\(id)" }
        switch event {
        case .stageStarted(let name, _):
            metadata["stage"] = "\(name)"
            logger.info("stage started", metadata: metadata)
        case .taskQueued:
            logger.debug("task queued", metadata: metadata)
        case .taskStarted(_, let attempt, _):
            metadata["attempt"] = "\(attempt)"
            logger.debug("task started", metadata: metadata)
        case .taskSucceeded:
            logger.info("task succeeded", metadata: metadata)
        case .taskRetried(_, let attempt, let error, let delay, _):
            metadata["attempt"] = "\(attempt)"
            metadata["error"] = "\(error)"
            metadata["delay_us"] = "\(delay.microseconds)"
            logger.notice("task retrying", metadata: metadata)
        case .taskFailed(_, let error, _):
            metadata["error"] = "\(error)"
            logger.error("task failed", metadata: metadata)
        case .taskTimedOut:
            logger.error("task timed out", metadata: metadata)
        case .taskSkipped(_, let dependency, _):
            metadata["dependency"] = "\(dependency)"
            logger.notice("task skipped", metadata: metadata)
        case .taskCancelled:
            logger.notice("task cancelled", metadata: metadata)
        case .milestoneReached(let name, _):
            metadata["milestone"] = "\(name)"
            logger.info("milestone reached", metadata: metadata)
        case .runFinished(let outcome, _):
            metadata["outcome"] = "\(outcome)"
            if case .failed = outcome {
                logger.error("run finished", metadata: metadata)
            } else {
                logger.info("run finished", metadata: metadata)
            }
        }
    }

    /// Logs a report as one `info` line (or `error`, if the run failed): outcome, duration,
    /// critical path and task count.
    public func log(_ report: RunReport) {
        let metadata: Logger.Metadata = [
            "outcome": "\(report.outcome)",
            "duration_us": "\(report.duration.microseconds)",
            "critical_path": .array(report.criticalPath.map { .string($0) }),
            "tasks": "\(report.tasks.count)",
        ]
        if report.isSuccess {
            logger.info("run report", metadata: metadata)
        } else {
            logger.error("run report", metadata: metadata)
        }
    }
}

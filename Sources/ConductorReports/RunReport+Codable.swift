/// A report as JSON, so that a launch measured today can be compared with one measured next
/// release: `JSONEncoder().encode(report)` and `JSONDecoder().decode(RunReport.self, from:)`.
/// The format is documented in the "Saved reports" article and in `docs/report-format.md`.
///
/// ```swift
/// let data = try JSONEncoder().encode(try await launcher.report())
/// try data.write(to: URL(filePath: "launch.json"))
/// let saved = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(filePath: "launch.json")))
/// ```
///
/// Every report carries `"format": "conductor.run-report"` and a `"version"` of the form
/// `"MAJOR.MINOR"`. A reader reads every version with its own major number, ignoring fields it
/// does not know; a newer major version is refused with ``ReportFormatError/Code-swift.struct/unsupportedVersion``.
/// Times are whole nanoseconds from the start of the run. A task's error is saved as its
/// type, code and message and read back as a ``RecordedFailure``; the run's ``GraphError``
/// is read back with its code, message and task but no ``GraphError/underlyingError``, which
/// only a live report keeps.
extension RunReport: Codable {
    /// The format's name, in every report's `format` field.
    static let formatName = "conductor.run-report"
    /// The version this Conductor writes; it reads every `1.x`. 1.1 added `run`; 1.2 added a
    /// task's `parent` and `removed`.
    static let formatVersion = (major: 1, minor: 2)

    private enum CodingKeys: String, CodingKey {
        case format, version, run, outcome, durationNs, criticalPath, milestones, tasks
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let format = try? container.decodeIfPresent(String.self, forKey: .format)
        guard format == Self.formatName else {
            throw ReportFormatError.notAReport(
                format.map { "its format is '\($0)'" } ?? "it has no format field")
        }
        guard let version = try? container.decode(String.self, forKey: .version),
            let major = Int(version.split(separator: ".").first ?? "")
        else {
            throw ReportFormatError.notAReport("it has no version of the form MAJOR.MINOR")
        }
        guard major == Self.formatVersion.major else {
            throw ReportFormatError.unsupportedVersion(version, reading: Self.formatVersion.major)
        }
        let tasks = try container.decode([SavedTask].self, forKey: .tasks).map { try $0.record }
        self.init(
            outcome: try container.decode(SavedRunOutcome.self, forKey: .outcome).outcome,
            tasks: tasks,
            milestones: try container.decode([SavedMilestone].self, forKey: .milestones).map { ($0.name, $0.at) },
            duration: .nanoseconds(try container.decode(Int64.self, forKey: .durationNs)),
            criticalPath: try container.decode([String].self, forKey: .criticalPath))
        identity = try container.decodeIfPresent(SavedIdentity.self, forKey: .run)?.identity
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.formatName, forKey: .format)
        try container.encode("\(Self.formatVersion.major).\(Self.formatVersion.minor)", forKey: .version)
        try container.encodeIfPresent(identity.map(SavedIdentity.init), forKey: .run)
        try container.encode(SavedRunOutcome(outcome), forKey: .outcome)
        try container.encode(duration.nanoseconds, forKey: .durationNs)
        try container.encode(criticalPath, forKey: .criticalPath)
        try container.encode(milestones.map { SavedMilestone(name: $0.name, at: $0.at) }, forKey: .milestones)
        try container.encode(tasks.map(SavedTask.init), forKey: .tasks)
    }
}

/// A launch's report in the same file as a run's: the run's fields and, once the launch was
/// shut down, a `"shutdown"` field beside them. A run's reader ignores that field; a launch's
/// reads a run's file as a launch never shut down.
///
/// ```swift
/// let data = try JSONEncoder().encode(try await launcher.report())
/// let saved = try JSONDecoder().decode(LaunchReport.self, from: data)
/// ```
extension LaunchReport: Codable {
    private enum CodingKeys: String, CodingKey {
        case shutdown
    }

    public init(from decoder: any Decoder) throws {
        let run = try RunReport(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(run: run, shutdown: try container.decodeIfPresent(SavedShutdown.self, forKey: .shutdown)?.report)
    }

    public func encode(to encoder: any Encoder) throws {
        try run.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(shutdown.map(SavedShutdown.init), forKey: .shutdown)
    }
}

// MARK: - The parts of a saved report

/// `{"name": "launch", "id": "0F5B…", "startedAt": "2026-11-27T12:49:02.123Z"}`; no `name` for
/// a graph's run.
private struct SavedIdentity: Codable {
    var name: String?
    var id: String
    var startedAt: String

    init(_ identity: RunIdentity) {
        name = identity.name
        id = identity.id
        startedAt = RunIdentity.timeText(identity.startedAt)
    }

    var identity: RunIdentity {
        get throws {
            guard let date = RunIdentity.time(startedAt) else {
                throw ReportFormatError.notAReport("its run's startedAt '\(startedAt)' is not an ISO 8601 time")
            }
            return RunIdentity(name: name, id: id, startedAt: date)
        }
    }
}

/// `{"name": "firstScreen", "atNs": 300000000}`
private struct SavedMilestone: Codable {
    var name: String
    var at: Duration

    init(name: String, at: Duration) {
        self.name = name
        self.at = at
    }

    private enum CodingKeys: String, CodingKey { case name, atNs }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        at = .nanoseconds(try container.decode(Int64.self, forKey: .atNs))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(at.nanoseconds, forKey: .atNs)
    }
}

/// `{"type": "Conductor.GraphError", "code": "timedOut", "message": "…"}`, and `taskID` for a
/// run's failure.
private struct SavedError: Codable {
    var type: String
    var code: String?
    var message: String
    var taskID: String?
}

/// `{"kind": "completed"}`, `{"kind": "cancelled"}`, or `{"kind": "failed", "error": {…}}`.
private struct SavedRunOutcome: Codable {
    var kind: String
    var error: SavedError?

    init(_ outcome: RunOutcome) {
        switch outcome {
        case .completed: kind = "completed"
        case .cancelled: kind = "cancelled"
        case .failed(let error):
            kind = "failed"
            self.error = SavedError(
                type: String(reflecting: GraphError.self), code: "\(error.code)", message: error.message,
                taskID: error.taskID)
        }
    }

    var outcome: RunOutcome {
        get throws {
            switch kind {
            case "completed": return .completed
            case "cancelled": return .cancelled
            case "failed":
                guard let error else { throw ReportFormatError.notAReport("a failed run has no error") }
                guard let code = error.code.flatMap(GraphError.Code.named) else {
                    throw ReportFormatError.unknownValue(error.code ?? "", field: "run error code")
                }
                return .failed(GraphError(code, error.message, taskID: error.taskID))
            default: throw ReportFormatError.unknownValue(kind, field: "run outcome")
            }
        }
    }
}

/// `{"kind": "succeeded"}`, `{"kind": "failed", "error": {…}}`,
/// `{"kind": "timedOut", "afterNs": …}`, `{"kind": "skipped", "dependency": "…"}`,
/// `{"kind": "cancelled"}`.
private struct SavedTaskOutcome: Codable {
    var kind: String
    var error: SavedError?
    var afterNs: Int64?
    var dependency: String?

    init(_ outcome: TaskOutcome) {
        switch outcome {
        case .succeeded: kind = "succeeded"
        case .cancelled: kind = "cancelled"
        case .timedOut(let after):
            kind = "timedOut"
            afterNs = after.nanoseconds
        case .skipped(let dependency):
            kind = "skipped"
            self.dependency = dependency
        case .failed(let error):
            kind = "failed"
            let recorded = RecordedFailure(recording: error)
            self.error = SavedError(type: recorded.typeName, code: recorded.code, message: recorded.message)
        }
    }

    var outcome: TaskOutcome {
        get throws {
            switch kind {
            case "succeeded": return .succeeded
            case "cancelled": return .cancelled
            case "timedOut":
                guard let afterNs else { throw ReportFormatError.notAReport("a timed-out task has no afterNs") }
                return .timedOut(after: .nanoseconds(afterNs))
            case "skipped":
                guard let dependency else {
                    throw ReportFormatError.notAReport("a skipped task has no dependency")
                }
                return .skipped(dependency: dependency)
            case "failed":
                guard let error else { throw ReportFormatError.notAReport("a failed task has no error") }
                return .failed(RecordedFailure(typeName: error.type, code: error.code, message: error.message))
            default: throw ReportFormatError.unknownValue(kind, field: "task outcome")
            }
        }
    }
}

/// One ``TaskRecord``; times in nanoseconds from the start of the run, absent when unknown.
private struct SavedTask: Codable {
    var id: String
    var stage: String?
    var dependencies: [String]
    var outcome: SavedTaskOutcome
    var queuedAtNs: Int64?
    var startedAtNs: Int64?
    var endedAtNs: Int64
    var attempts: Int
    var placement: String
    /// Since 1.2; left out for a task that is nobody's subtask.
    var parent: String?
    /// Since 1.2; written only when true.
    var removed: Bool?

    init(_ task: TaskRecord) {
        id = task.id
        stage = task.stage
        dependencies = task.dependencies
        outcome = SavedTaskOutcome(task.outcome)
        queuedAtNs = task.queuedAt?.nanoseconds
        startedAtNs = task.startedAt?.nanoseconds
        endedAtNs = task.endedAt.nanoseconds
        attempts = task.attempts
        placement = task.placement
        parent = task.parent
        removed = task.wasRemoved ? true : nil
    }

    var record: TaskRecord {
        get throws {
            TaskRecord(
                id: id, stage: stage, dependencies: dependencies, outcome: try outcome.outcome,
                queuedAt: queuedAtNs.map(Duration.nanoseconds), startedAt: startedAtNs.map(Duration.nanoseconds),
                endedAt: .nanoseconds(endedAtNs), attempts: attempts, placement: placement, parent: parent,
                wasRemoved: removed ?? false)
        }
    }
}

/// A launcher's shutdown: `{"startedAtNs": …, "endedAtNs": …, "undos": [undo]}`, each undo
/// `{"task": "…", "outcome": undo outcome, "startedAtNs": …, "endedAtNs": …}`.
private struct SavedShutdown: Codable {
    var startedAtNs: Int64
    var endedAtNs: Int64
    var undos: [SavedUndo]

    init(_ report: ShutdownReport) {
        startedAtNs = report.startedAt.nanoseconds
        endedAtNs = report.endedAt.nanoseconds
        undos = report.undos.map(SavedUndo.init)
    }

    var report: ShutdownReport {
        get throws {
            ShutdownReport(
                undos: try undos.map { try $0.record }, startedAt: .nanoseconds(startedAtNs),
                endedAt: .nanoseconds(endedAtNs))
        }
    }
}

/// `{"kind": "undone"}`, `{"kind": "failed", "error": error}`,
/// `{"kind": "timedOut", "afterNs": …}` or `{"kind": "cancelled"}`.
private struct SavedUndo: Codable {
    var task: String
    var kind: String
    var error: SavedError?
    var afterNs: Int64?
    var startedAtNs: Int64
    var endedAtNs: Int64

    init(_ record: UndoRecord) {
        task = record.task
        startedAtNs = record.startedAt.nanoseconds
        endedAtNs = record.endedAt.nanoseconds
        switch record.outcome {
        case .undone: kind = "undone"
        case .cancelled: kind = "cancelled"
        case .timedOut(let after):
            kind = "timedOut"
            afterNs = after.nanoseconds
        case .failed(let error):
            kind = "failed"
            let recorded = RecordedFailure(recording: error)
            self.error = SavedError(type: recorded.typeName, code: recorded.code, message: recorded.message)
        }
    }

    var record: UndoRecord {
        get throws {
            let outcome: UndoOutcome
            switch kind {
            case "undone": outcome = .undone
            case "cancelled": outcome = .cancelled
            case "timedOut":
                guard let afterNs else { throw ReportFormatError.notAReport("a timed-out undo has no afterNs") }
                outcome = .timedOut(after: .nanoseconds(afterNs))
            case "failed":
                guard let error else { throw ReportFormatError.notAReport("a failed undo has no error") }
                outcome = .failed(RecordedFailure(typeName: error.type, code: error.code, message: error.message))
            default: throw ReportFormatError.unknownValue(kind, field: "undo outcome")
            }
            return UndoRecord(
                task: task, outcome: outcome, startedAt: .nanoseconds(startedAtNs), endedAt: .nanoseconds(endedAtNs))
        }
    }
}

public import Foundation

/// An error from a ``JobQueue``: opening its file, enqueuing, or a job's end as recorded.
///
/// Every message names the culprit: the file for a storage fault, the job (id and kind) for a
/// job's end, the kind for a registration. Match on ``code`` rather than on the message:
///
/// ```swift
/// do throws(JobQueueError) {
///     let queue = try JobQueue(path: path)
///     if let failure = try queue.job(id)?.lastError, failure.code == .handlerFailed {
///         print(failure.message)
///     }
/// } catch where error.code == .databaseLocked {
///     print(error.message)  // "the job queue file '/…/jobs.sqlite' is locked by another connection"
/// } catch {
///     print(error.message)
/// }
/// ```
public struct JobQueueError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: String, Hashable, Sendable, CaseIterable {
            case cannotOpen, databaseLocked, readOnly, corrupt, diskFull, storage
            case unknownKind, duplicateKind, payloadUndecodable, payloadUnencodable
            case handlerFailed, timedOut, cancelled, expired, dependencyFailed
            case unknownJob, uniqueJobRunning, alreadyStarted, notStarted, shutDown, invalidOption
        }

        fileprivate let kind: Kind

        /// The file cannot be opened or created (a missing folder, no permission).
        public static let cannotOpen = Code(kind: .cannotOpen)
        /// Another connection holds the file's lock longer than ``JobQueueConfiguration/busyTimeout``
        /// (SQLite's `SQLITE_BUSY`/`SQLITE_LOCKED`). Nothing was written; try again later.
        public static let databaseLocked = Code(kind: .databaseLocked)
        /// The file (or its folder) cannot be written.
        public static let readOnly = Code(kind: .readOnly)
        /// The file is not a database, or its contents are damaged.
        public static let corrupt = Code(kind: .corrupt)
        /// The disk (or the database's page limit) is full. Nothing was written.
        public static let diskFull = Code(kind: .diskFull)
        /// Any other storage fault; ``JobQueueError/underlyingError`` says what.
        public static let storage = Code(kind: .storage)
        /// A job names a kind no handler is registered for.
        public static let unknownKind = Code(kind: .unknownKind)
        /// A kind was registered twice.
        public static let duplicateKind = Code(kind: .duplicateKind)
        /// A job's stored payload no longer decodes as its kind's `Payload`: the job ended
        /// failed, and its bytes stay in ``JobRecord/payload``.
        public static let payloadUndecodable = Code(kind: .payloadUndecodable)
        /// A payload could not be encoded; nothing was enqueued.
        public static let payloadUnencodable = Code(kind: .payloadUnencodable)
        /// The handler threw on the job's last attempt.
        public static let handlerFailed = Code(kind: .handlerFailed)
        /// The handler's last attempt did not return within ``JobOptions/timeout``.
        public static let timedOut = Code(kind: .timedOut)
        /// The job was cancelled (``JobQueue/cancel(_:)``, ``JobQueue/cancel(tag:)``, or replaced
        /// by a unique job of the same name).
        public static let cancelled = Code(kind: .cancelled)
        /// The job had not started by its ``JobOptions/expiresAt``.
        public static let expired = Code(kind: .expired)
        /// A job this one runs after (``JobOptions/after``) did not succeed, so this one ended
        /// cancelled.
        public static let dependencyFailed = Code(kind: .dependencyFailed)
        /// No job has that id.
        public static let unknownJob = Code(kind: .unknownJob)
        /// ``JobUniqueness/replaceExisting(_:)`` met a running job of that name, which cannot
        /// be replaced; nothing was enqueued.
        public static let uniqueJobRunning = Code(kind: .uniqueJobRunning)
        /// ``JobQueue/start()`` was called twice.
        public static let alreadyStarted = Code(kind: .alreadyStarted)
        /// ``JobQueue/whenIdle()`` was called before ``JobQueue/start()`` returned.
        public static let notStarted = Code(kind: .notStarted)
        /// The queue has been shut down.
        public static let shutDown = Code(kind: .shutDown)
        /// An option is out of range (a negative timeout, a retry policy of no attempts, a
        /// non-positive period); nothing was enqueued.
        public static let invalidOption = Code(kind: .invalidOption)

        public var description: String { kind.rawValue }

        /// The code whose ``description`` is `name`: how a recorded error is read back.
        static func named(_ name: String) -> Code? { Kind(rawValue: name).map(Code.init(kind:)) }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the culprit.
    public let message: String
    /// The error behind this one, as thrown, when there is one in this process: what SQLite
    /// reported, what the handler threw. `nil` for an error read back from the file. Not part of
    /// equality or hashing.
    public var underlyingError: (any Error)? { cause?.error }
    private let cause: Cause?

    private struct Cause: Sendable {
        let error: any Error
    }

    init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = underlying.map(Cause.init)
    }

    public static func == (lhs: JobQueueError, rhs: JobQueueError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public var description: String { "JobQueueError.\(code): \(message)" }
}

extension JobQueueError: LocalizedError {
    public var errorDescription: String? { message }
}

extension JobQueueError {
    static func unknownJob(_ id: JobID) -> JobQueueError {
        JobQueueError(.unknownJob, "no job with id \(id)")
    }

    static func duplicateKind(_ name: String) -> JobQueueError {
        JobQueueError(.duplicateKind, "job kind '\(name)' is registered twice")
    }

    static func alreadyStarted(_ operation: String) -> JobQueueError {
        JobQueueError(.alreadyStarted, "cannot \(operation): the job queue has already started")
    }

    static func notStarted(_ operation: String) -> JobQueueError {
        JobQueueError(.notStarted, "cannot \(operation): the job queue has not started")
    }

    static func shutDown(_ operation: String) -> JobQueueError {
        JobQueueError(.shutDown, "cannot \(operation): the job queue has been shut down")
    }

    static func invalidOption(_ what: String, kind: String) -> JobQueueError {
        JobQueueError(.invalidOption, "a job of kind '\(kind)' has \(what)")
    }

    static func payloadUnencodable(kind: String, _ error: any Error) -> JobQueueError {
        JobQueueError(
            .payloadUnencodable, "the payload of a job of kind '\(kind)' cannot be encoded: \(error)", underlying: error
        )
    }

    static func uniqueJobRunning(_ name: String, job: JobID) -> JobQueueError {
        JobQueueError(
            .uniqueJobRunning, "job \(job) named '\(name)' is running and cannot be replaced until it ends")
    }

    /// A job's end, as recorded in the file: `code` with the message that names the job.
    static func ended(_ code: Code, job: JobID, kind: String, _ why: String, underlying: (any Error)? = nil)
        -> JobQueueError
    {
        JobQueueError(code, "job \(job) (\(kind)) \(why)", underlying: underlying)
    }
}

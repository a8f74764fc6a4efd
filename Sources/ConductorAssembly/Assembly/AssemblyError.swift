public import Foundation

/// An error from resolving a service of an ``Assembly``.
///
/// Every message names the service: its type, its name, and for a cycle the whole path.
/// Match on ``code`` rather than on the message:
///
/// ```swift
/// do {
///     _ = try await assembly.resolve(Tracker.self)
/// } catch let error as AssemblyError where error.code == .cycle {
///     print(error.message)  // "factories form a loop: Tracker → SecureStore → Tracker"
/// }
/// ```
///
/// A factory's own error is not wrapped: it reaches every waiter as it was thrown.
public struct AssemblyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. New codes may be added, so a `switch` should have a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: Hashable, Sendable {
            case unknownService, cycle, notOnMain
        }

        fileprivate let kind: Kind

        /// No service of that type and name is registered.
        public static let unknownService = Code(kind: .unknownService)
        /// Creating the service needs the service itself, directly or through others.
        public static let cycle = Code(kind: .cycle)
        /// A synchronous resolve was called off the main thread, where it would block.
        public static let notOnMain = Code(kind: .notOnMain)

        public var description: String { "\(kind)" }
    }

    /// What went wrong.
    public let code: Code
    /// A sentence that names the culprit.
    public let message: String
    /// The services involved: the one asked for, or for a cycle the path, which starts and
    /// ends with the same service.
    public let path: [String]

    package init(_ code: Code, _ message: String, path: [String]) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String { "AssemblyError.\(code): \(message)" }

    static func unknownService(_ key: ServiceKey) -> AssemblyError {
        AssemblyError(.unknownService, "no service \(key) is registered", path: ["\(key)"])
    }

    static func cycle(_ path: [ServiceKey]) -> AssemblyError {
        let names = path.map { "\($0)" }
        return AssemblyError(.cycle, "factories form a loop: \(names.joined(separator: " → "))", path: names)
    }

    static func notOnMain(_ key: ServiceKey) -> AssemblyError {
        AssemblyError(
            .notOnMain,
            "resolveOnMain(\(key)) was called off the main thread; use `await resolve` there",
            path: ["\(key)"]
        )
    }
}

/// What an app shows: `error.localizedDescription` is the message that names the culprit,
/// not Foundation's "The operation could not be completed".
extension AssemblyError: LocalizedError {
    public var errorDescription: String? { message }
}

extension AssemblyError: CodedError { package var codeName: String { "\(code)" } }

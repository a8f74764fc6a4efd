#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// What a report is of: the launcher's name where there is one, an id no other run has, and
/// when the run started by the wall clock.
///
/// ```swift
/// let report = try await launcher.report()
/// print(report.identity?.description ?? "a report saved before format 1.1")
/// // launcher 'launch', run 0F5B…-…, started 2026-11-27T12:49:02.123Z
/// ```
///
/// `conductor-report diff` reads it to refuse comparing runs of two different launchers.
public struct RunIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The launcher's name (``Launcher/name``); `nil` for a ``TaskGraph``'s run, which has none.
    public let name: String?
    /// A UUID made when the run started: no two runs have the same. A report written by
    /// another tool may hold any other text.
    public let id: String
    /// When the run started, by the system's wall clock (not the clock the run was given,
    /// which times the report's tasks); for a launch cancelled before it started, when its
    /// report was made. A saved report keeps it to the millisecond.
    public let startedAt: Date

    package init(name: String?, id: String = UUID().uuidString, startedAt: Date = Date()) {
        self.name = name
        self.id = id
        self.startedAt = startedAt
    }

    public var description: String {
        (name.map { "launcher '\($0)', " } ?? "") + "run \(id), started \(Self.timeText(startedAt))"
    }

    /// `2026-11-27T12:49:02.123Z`: UTC, to the nearest millisecond. Counted in whole
    /// milliseconds, so a time read back with ``time(_:)`` is written again as the same text.
    package static func timeText(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        var (seconds, fraction) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        if fraction < 0 { (seconds, fraction) = (seconds - 1, fraction + 1000) }
        let whole = Date.ISO8601FormatStyle().format(Date(timeIntervalSince1970: Double(seconds)))
        let digits = String(fraction)
        return String(whole.dropLast()) + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    /// A time as ``timeText(_:)`` writes it, or any ISO 8601 time with or without a fraction
    /// of a second.
    package static func time(_ text: String) -> Date? {
        if text.hasSuffix("Z"), let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)..<text.index(before: text.endIndex)]
            if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let fraction = Double("0." + digits),
                let whole = try? Date.ISO8601FormatStyle().parse(String(text[..<dot]) + "Z")
            {
                return whole.addingTimeInterval(fraction)
            }
        }
        return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }
}

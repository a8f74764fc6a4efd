/// When `conductor-report diff` calls a change a regression.
///
/// ```swift
/// let thresholds = Thresholds(failOver: 0.10, minChange: .milliseconds(5), milestones: ["firstScreen"])
/// ```
///
/// A measure regresses when it grew by more than `failOver` of its base **and** by at least
/// `minChange`: the second keeps a 3 ms task that took 4 ms from failing CI at +33 %.
public struct Thresholds: Sendable, Hashable {
    /// The growth, as a fraction of the base (0.1 for 10 %), beyond which the critical path or a
    /// named milestone fails the check; `nil` to report changes without failing.
    public var failOver: Double?
    /// Changes smaller than this are noise: not listed, and never a regression.
    public var minChange: Duration
    /// Milestones checked as well as the critical path.
    public var milestones: [String]

    public init(failOver: Double? = nil, minChange: Duration = .milliseconds(1), milestones: [String] = []) {
        self.failOver = failOver
        self.minChange = minChange
        self.milestones = milestones
    }

    /// `"10%"` or `"10"` as 0.1.
    public static func percentage(_ text: String) throws(ReportToolError) -> Double {
        let number = text.hasSuffix("%") ? String(text.dropLast()) : text
        guard let value = Double(number.trimmingSpaces), value >= 0, value.isFinite else {
            throw ReportToolError.badArgument("'\(text)' is not a percentage such as 10%")
        }
        return value / 100
    }

    /// `"5ms"`, `"1.5s"`, `"250us"` (or `µs`), `"100ns"`; a space before the unit is allowed.
    public static func duration(_ text: String) throws(ReportToolError) -> Duration {
        let trimmed = text.trimmingSpaces
        let units: [(suffix: String, nanoseconds: Double)] = [
            ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9),
        ]
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            let number = String(trimmed.dropLast(unit.suffix.count)).trimmingSpaces
            if let value = Double(number), value >= 0, value.isFinite {
                return .nanoseconds(Int64((value * unit.nanoseconds).rounded()))
            }
        }
        throw ReportToolError.badArgument("'\(text)' is not a duration such as 5ms, 1.5s or 250us")
    }
}

extension String {
    var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

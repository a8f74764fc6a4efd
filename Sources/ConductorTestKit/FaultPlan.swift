import ConductorCore

/// Which faults a ``Simulation`` injects, and how often, at each named point of a scenario.
///
/// A point is a name your code or a transport asks about — a task body ("thumbnails"), a
/// transport's sends ("send") — with ``Simulation/injectFault(at:key:)``. At each visit the
/// simulation draws from its seed whether to fail, cancel or delay there, in the proportions
/// the plan gives, so the same seed injects the same faults at the same moments, and a seed
/// that failed replays exactly:
///
/// ```swift
/// let faults = FaultPlan()
///     .failing("send", rate: 0.1)                        // one send in ten throws
///     .delaying("send", rate: 0.2, by: .milliseconds(300)) // two in ten wait 300 ms, simulated
///     .cancelling("thumbnails", rate: 0.05)
/// try await Simulation.explore(seeds: 1...500, faults: faults, launch)
/// ```
///
/// The rates of one point add up to at most 1; what is left is the chance of no fault.
public struct FaultPlan: Hashable, Sendable, CustomStringConvertible {
    /// The chance of each fault at one point.
    struct Rates: Hashable, Sendable {
        var fail = 0.0
        var cancel = 0.0
        var delay = 0.0
        var delayBy = Duration.zero
    }

    private(set) var points: [String: Rates] = [:]

    /// A plan that injects nothing.
    public init() {}

    /// No faults anywhere: what a simulation uses unless given a plan.
    public static let none = FaultPlan()

    /// The plan, with a fraction `rate` (0 to 1) of the visits to `point` failing: there,
    /// ``Simulation/injectFault(at:key:)`` throws the ``InjectedFault``.
    public func failing(_ point: String, rate: Double) -> FaultPlan {
        changing(point, rate: rate, "failing") { $0.fail = rate }
    }

    /// The plan, with a fraction `rate` (0 to 1) of the visits to `point` cancelled: there,
    /// ``Simulation/injectFault(at:key:)`` cancels the current task and throws
    /// `CancellationError`, as a task cancelled at that moment would.
    public func cancelling(_ point: String, rate: Double) -> FaultPlan {
        changing(point, rate: rate, "cancelling") { $0.cancel = rate }
    }

    /// The plan, with a fraction `rate` (0 to 1) of the visits to `point` delayed by `delay`
    /// of the simulation's time: there, ``Simulation/injectFault(at:key:)`` sleeps on the
    /// simulation's clock, which costs no real time.
    public func delaying(_ point: String, rate: Double, by delay: Duration) -> FaultPlan {
        precondition(delay >= .zero, "FaultPlan: the delay at '\(point)' is negative (\(delay.shortDescription))")
        return changing(point, rate: rate, "delaying") {
            $0.delay = rate
            $0.delayBy = delay
        }
    }

    private func changing(
        _ point: String, rate: Double, _ what: String, _ change: (inout Rates) -> Void
    ) -> FaultPlan {
        precondition(
            rate >= 0 && rate <= 1, "FaultPlan: \(what) '\(point)' at rate \(rate), which is not between 0 and 1")
        var plan = self
        var rates = plan.points[point] ?? Rates()
        change(&rates)
        precondition(
            rates.fail + rates.cancel + rates.delay <= 1,
            "FaultPlan: the rates at '\(point)' add up to \(rates.fail + rates.cancel + rates.delay), more than 1")
        plan.points[point] = rates
        return plan
    }

    /// The fault, if any, for a draw `unit` in `0..<1` at `point`: fail, then cancel, then
    /// delay, each over its share of the interval.
    func fault(at point: String, unit: Double) -> InjectedFault.Kind? {
        guard let rates = points[point] else { return nil }
        if unit < rates.fail { return .fail }
        if unit < rates.fail + rates.cancel { return .cancel }
        if unit < rates.fail + rates.cancel + rates.delay { return .delay(rates.delayBy) }
        return nil
    }

    public var description: String {
        guard !points.isEmpty else { return "no faults" }
        return points.sorted { $0.key < $1.key }.map { point, rates in
            var parts: [String] = []
            if rates.fail > 0 { parts.append("fail \(rates.fail)") }
            if rates.cancel > 0 { parts.append("cancel \(rates.cancel)") }
            if rates.delay > 0 { parts.append("delay \(rates.delay) by \(rates.delayBy.shortDescription)") }
            return "\(point): \(parts.joined(separator: ", "))"
        }.joined(separator: "; ")
    }
}

/// A fault a ``Simulation`` injected: where, at which visit, and what. Thrown by
/// ``Simulation/injectFault(at:key:)`` when the fault is a failure.
public struct InjectedFault: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the simulation did at the point.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case fail
            case cancel
            case delay(Duration)
        }
        private let value: Value

        /// The point threw this fault.
        public static let fail = Kind(value: .fail)
        /// The point cancelled its task and threw `CancellationError`.
        public static let cancel = Kind(value: .cancel)
        /// The point waited this long on the simulation's clock, then went on.
        public static func delay(_ duration: Duration) -> Kind { Kind(value: .delay(duration)) }

        /// How long the point waited, for a delay.
        public var delay: Duration? {
            if case .delay(let duration) = value { return duration }
            return nil
        }

        public var description: String {
            switch value {
            case .fail: "fail"
            case .cancel: "cancel"
            case .delay(let duration): "delay \(duration.shortDescription)"
            }
        }
    }

    /// The point's name, as given to ``Simulation/injectFault(at:key:)``.
    public let point: String
    /// The key the point was asked with (a request's path, say), if any.
    public let key: String?
    /// Which visit to the point (with this key) it was, from 1.
    public let visit: Int
    public let kind: Kind

    public var description: String {
        "\(kind) at '\(point)'\(key.map { " (\($0))" } ?? "") visit \(visit)"
    }
}

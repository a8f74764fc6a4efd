/// Durations and fractions as `diff` prints them.
enum TimeText {
    /// "850 µs", "12.5 ms", "5 ms", "1.25 s", "1.00 s".
    static func duration(_ duration: Duration) -> String {
        let nanoseconds = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        let magnitude = abs(nanoseconds)
        if magnitude < 1e3 { return "\(Int(nanoseconds)) ns" }
        if magnitude < 1e6 { return "\(Int((nanoseconds / 1e3).rounded())) µs" }
        if magnitude < 1e9 { return decimal(nanoseconds / 1e6, places: magnitude < 1e8 ? 1 : 0) + " ms" }
        return decimal(nanoseconds / 1e9, places: 2, keepZeros: true) + " s"
    }

    /// "+56 ms", "-3.5 ms", "±0 ns".
    static func signed(_ duration: Duration) -> String {
        if duration == .zero { return "±0 ms" }
        return (duration > .zero ? "+" : "-") + Self.duration(duration > .zero ? duration : .zero - duration)
    }

    /// "+13.6%", "-2.0%", "new" for growth from nothing.
    static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return "from 0" }
        return (fraction >= 0 ? "+" : "") + decimal(fraction * 100, places: 1) + "%"
    }

    /// `value` with `places` decimals, or none when they would all be zero and `keepZeros` is
    /// false: "5 ms" but "1.00 s", whose two places say how precise it is.
    private static func decimal(_ value: Double, places: Int, keepZeros: Bool = false) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if places == 0 || (!keepZeros && rounded == rounded.rounded()) { return "\(Int(rounded))" }
        let whole = Int(rounded.magnitude)
        var fraction = "\(Int(((rounded.magnitude - Double(whole)) * scale).rounded()))"
        while fraction.count < places { fraction = "0" + fraction }
        return (rounded < 0 ? "-" : "") + "\(whole).\(fraction)"
    }
}

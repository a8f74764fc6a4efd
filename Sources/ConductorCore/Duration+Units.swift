extension Duration {
    /// Whole microseconds, the unit of Chrome trace events.
    package var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// A short human reading: "850 µs", "12.5 ms", "1.25 s"; "400 ns" below a microsecond,
    /// and a minus sign before a negative one ("-2 s"). The one format every printed
    /// duration uses: descriptions, error messages, log lines and text reports.
    package var shortDescription: String {
        if self < .zero { return "-" + (Duration.zero - self).shortDescription }
        let micros = microseconds
        if micros == 0, self > .zero { return "\(nanoseconds) ns" }
        if micros < 1_000 { return "\(micros) µs" }
        if micros < 1_000_000 {
            let tenths = micros / 100
            return tenths % 10 == 0 ? "\(tenths / 10) ms" : "\(tenths / 10).\(tenths % 10) ms"
        }
        let hundredths = micros / 10_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
    }
}

extension TaskGraph {
    /// Test hook: a structured run (``TaskGraph/run(concurrencyLimit:clock:telemetry:staysOpen:_:)``,
    /// ``Launcher/run()``) started with this set holds its caller, right after it started the
    /// run's driver, until the run has ended — the point where a caller that checked its
    /// cancellation only afterwards would let the driver hand out bodies of a run it was too
    /// late to cancel. Set it with `TaskGraph.$holdsCallerAfterStartingDriver.withValue(true) { … }`.
    @TaskLocal package static var holdsCallerAfterStartingDriver = false
}

extension GraphRunStorage {
    /// Where a structured run calls the hook above, with the driver started and before it
    /// waits for the run.
    package func afterStartingDriver() async {
        guard TaskGraph.holdsCallerAfterStartingDriver else { return }
        _ = await reportCell.waitIgnoringCancellation()
    }
}

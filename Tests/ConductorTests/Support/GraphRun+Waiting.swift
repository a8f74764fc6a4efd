import Conductor

extension GraphRun {
    /// Waits for the first event (from the start of the run) that matches: how a test knows
    /// a run got somewhere without sleeping.
    @discardableResult
    func event(where predicate: (GraphEvent) -> Bool) async -> GraphEvent? {
        for await event in events where predicate(event) { return event }
        return nil
    }
}

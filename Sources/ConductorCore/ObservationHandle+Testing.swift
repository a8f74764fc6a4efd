extension ObservationHandle {
    /// Waits until the delivery task has ended — after the last batch, after ``cancel()``, or
    /// once what it observed has finished or been released — and returns `true`. Lets a test
    /// prove that no delivery task outlives its subject, without sleeping. If the waiting task
    /// is cancelled first (a test's time limit), cancels the delivery and returns `false`.
    package func finished() async -> Bool {
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        return !Task.isCancelled
    }
}

extension RetryPolicy {
    /// What validation reports about the policy's counts, naming the task that holds it: a
    /// policy of no attempts would end the task without running it, and a multiplier below 1
    /// would shrink the waits or make them zero.
    package func invalidCount(task: String) -> GraphError? {
        if maxAttempts < 1 { return .retryAttempts(maxAttempts, task: task) }
        if multiplier < 1 { return .retryMultiplier(multiplier, task: task) }
        return nil
    }
}

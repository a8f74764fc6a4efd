extension RunReport {
    /// How deep each task (by its position in ``RunReport/tasks``) is among subtasks: 0 for a
    /// task no body added, 1 for a subtask of such a task, and so on. A parent is listed before
    /// its subtasks, so one pass finds every depth; a parent the report does not list (a
    /// report written by hand) counts as depth 0.
    package var subtaskDepths: [Int] {
        var depthByID: [String: Int] = [:]
        return tasks.map { task in
            let depth = task.parent.map { (depthByID[$0] ?? 0) + 1 } ?? 0
            depthByID[task.id] = depth
            return depth
        }
    }
}

/// Where the library's own unstructured tasks run: a run's driver, a timer, an observer's
/// delivery, a gate's refresh. Normally `nil`, the global concurrent executor, as for any
/// `Task {}`.
///
/// Child tasks follow their parent's executor preference by themselves, but unstructured
/// tasks do not, so each place that starts one passes this along. ConductorTestKit's
/// `Simulation` binds it for the scenario it runs, so that everything the scenario starts
/// through Conductor runs on the simulation's one thread, in the order its seed picks.
package enum TaskPlacement {
    @TaskLocal package static var executor: (any TaskExecutor)?
}

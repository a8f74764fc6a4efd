import Conductor
import ConductorTestKit

/// What a body does in the seeded simulation tests of the graph and the launcher, logging its
/// beginning and how it ended in a `BodyLog`.
enum SimulatedBody: CaseIterable {
    case succeeds, fails, failsOnce, sleeps, ignoresCancellation

    struct Fault: Error {}

    /// Runs attempt `attempt` of `id`'s body on `simulation`.
    func run(_ id: String, attempt: Int, log: BodyLog, simulation: Simulation) async throws {
        let clock = simulation.clock
        log.begin(id, attempt)
        do {
            switch self {
            case .succeeds: await Task.yield()
            case .fails: throw Fault()
            case .failsOnce: if attempt == 1 { throw Fault() }
            case .sleeps: try await clock.sleep(for: .milliseconds(2))
            case .ignoresCancellation:
                // Awaiting another task's value is not cancellable: the body runs on after a
                // stop or a removal, to its end.
                let sleeper = Task(executorPreference: simulation) { try? await clock.sleep(for: .milliseconds(3)) }
                await sleeper.value
            }
        } catch {
            log.end(id, attempt, .threw)
            throw error
        }
        log.end(id, attempt, .returned)
    }
}

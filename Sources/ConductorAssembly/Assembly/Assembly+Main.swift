import Synchronization

extension Assembly {
    /// The service, handed back synchronously to main-thread code that cannot `await`.
    ///
    /// ```swift
    /// final class AccountViewController: UIViewController {
    ///     override func viewDidLoad() {
    ///         super.viewDidLoad()
    ///         let provider = try! assembly.resolveOnMain(AccountInfoProvider.self)
    ///     }
    /// }
    /// ```
    ///
    /// A service already created is returned at once. Otherwise the main thread waits for the
    /// creation, but keeps running the jobs of ``QueueExecutor/main`` meanwhile — a nested run
    /// loop — so a creation that hops to a background queue and back to the main queue (A on
    /// main needs B on a queue, which needs C on main) completes instead of deadlocking.
    ///
    /// Only work that reaches the main queue through ``QueueExecutor/main`` (an assembly
    /// factory registered `on: .main`, an actor bound to it) runs during the wait; work sent
    /// with `DispatchQueue.main.async` or `MainActor.run` waits until it returns. Off the main
    /// thread this throws ``AssemblyError/Code/notOnMain`` rather than block.
    public func resolveOnMain<Service: Sendable>(_ type: Service.Type = Service.self, name: String? = nil) throws
        -> Service
    {
        let key = ServiceKey(type, name: name)
        guard QueueExecutor.main.isCurrent else { throw AssemblyError.notOnMain(key) }
        let frames = ResolutionContext.current
        let frame = frames[root.assemblyID]
        let table = frame?.table ?? root
        if let instance = table.created(key) { return instance.unwrap(Service.self) }

        let outcome = Lock<Result<ServiceInstance, any Error>?>(nil)
        let finished = Atomic<Bool>(false)
        let path = frame?.path ?? ResolutionPath()
        // Not a child of any actor: the creation must not need the main queue we are blocking,
        // except through QueueExecutor.main, whose jobs this thread keeps running.
        Task.detached {
            let result: Result<ServiceInstance, any Error>
            do {
                result = .success(
                    try await ResolutionContext.$current.withValue(frames) {
                        try await table.resolve(key, path: path)
                    }
                )
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            finished.store(true, ordering: .releasing)
            QueueExecutor.main.wakeJobRunner()
        }
        QueueExecutor.main.runJobs { finished.load(ordering: .acquiring) }
        return try outcome.withLock { $0! }.get().unwrap(Service.self)
    }
}

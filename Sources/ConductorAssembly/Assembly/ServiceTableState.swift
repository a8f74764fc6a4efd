/// The pure state of an assembly's services: what is registered, what is created, what is
/// being created and who waits for whom. Its transitions return what to do; `ServiceTable`
/// does it after releasing the lock.
///
/// Cycles are found two ways. Within one chain of creations, the resolution path already holds
/// the service. Across concurrent chains (task 1 creates A and needs B while task 2 creates B
/// and needs A), each waiting creation records the creation it waits for, and a wait that would
/// close a loop of waits is refused.
struct ServiceTableState {
    typealias Creation = OnceCell<Result<ServiceInstance, any Error>>

    struct CreationID: Hashable {
        let raw: UInt64
    }

    enum Slot {
        case idle
        case creating(CreationID, Creation)
        /// Created; the instance is in `instances`.
        case created
        case weak(WeakReference)
    }

    struct WeakReference {
        weak var object: AnyObject?
    }

    struct Entry {
        var registration: ServiceRegistration
        var slot: Slot = .idle
    }

    enum Lookup {
        case found(ServiceInstance)
        /// Run the factory in the caller's task: a transient service.
        case createInline(ServiceRegistration)
        /// Run the factory in a new task that ends with `creation`, then wait for it like any waiter.
        case createShared(ServiceRegistration, CreationID, Creation)
        case wait(Creation, CreationID)
        case fail(AssemblyError)
    }

    private(set) var entries: [ServiceKey: Entry] = [:]
    /// The created singletons, apart from `entries` so the hot path copies out one reference
    /// rather than a whole entry.
    private var instances = CreatedInstances()
    private var nextCreationID: UInt64 = 0
    private var creatingKeys: [CreationID: ServiceKey] = [:]
    /// For each creation in flight, the creations it is waiting for (with repeats, for
    /// concurrent resolves of the same service).
    private var waits: [CreationID: [CreationID]] = [:]

    init(entries: [ServiceKey: Entry] = [:]) {
        self.entries = entries
    }

    mutating func register(_ key: ServiceKey, _ registration: ServiceRegistration) {
        entries[key] = Entry(registration: registration)
        instances[key] = nil
    }

    /// The service, if it was created and (for the weak scope) is still alive.
    func created(_ key: ServiceKey) -> ServiceInstance? {
        if let instance = instances[key] { return instance }
        guard let entry = entries[key], case .weak(let reference) = entry.slot else { return nil }
        return reference.object.flatMap(entry.registration.instance)
    }

    /// What to do to resolve `key` for a resolver on `path`, whose innermost shared creation
    /// is `owner`. A wait it returns is recorded against `owner`; end it with ``endWait(_:on:)``.
    mutating func lookup(_ key: ServiceKey, path: [ServiceKey], owner: CreationID?) -> Lookup {
        guard let entry = entries[key] else { return .fail(.unknownService(key)) }
        if let instance = created(key) { return .found(instance) }
        if path.contains(key) { return .fail(.cycle(path + [key])) }
        if case .creating(let id, let creation) = entry.slot {
            if let owner, let loop = waitChain(from: id, to: owner) {
                return .fail(.cycle(path + loop))
            }
            recordWait(of: owner, on: id)
            return .wait(creation, id)
        }
        if entry.registration.scope.isTransient { return .createInline(entry.registration) }
        let id = CreationID(raw: nextCreationID)
        nextCreationID += 1
        let creation = Creation()
        entries[key]?.slot = .creating(id, creation)
        creatingKeys[id] = key
        recordWait(of: owner, on: id)
        return .createShared(entry.registration, id, creation)
    }

    /// Ends creation `id` of `key`. A failure is not kept: the next request creates again.
    mutating func finish(_ key: ServiceKey, _ id: CreationID, with result: Result<ServiceInstance, any Error>) {
        creatingKeys[id] = nil
        waits[id] = nil
        // The registration may have been replaced while the factory ran; then the slot is not ours.
        guard let entry = entries[key], case .creating(let current, _) = entry.slot, current == id else { return }
        switch result {
        case .success(let instance) where entry.registration.scope.isWeak:
            entries[key]?.slot = .weak(WeakReference(object: entry.registration.object(instance)))
        case .success(let instance):
            entries[key]?.slot = .created
            instances[key] = instance
        case .failure:
            entries[key]?.slot = .idle
        }
    }

    mutating func endWait(_ owner: CreationID?, on id: CreationID) {
        guard let owner, var targets = waits[owner], let index = targets.firstIndex(of: id) else { return }
        targets.remove(at: index)
        waits[owner] = targets.isEmpty ? nil : targets
    }

    private mutating func recordWait(of owner: CreationID?, on id: CreationID) {
        guard let owner else { return }
        waits[owner, default: []].append(id)
    }

    /// The keys along a chain of waits from creation `start` to creation `end`, both included,
    /// if `start` (transitively) waits for `end`.
    private func waitChain(from start: CreationID, to end: CreationID) -> [ServiceKey]? {
        var visited: Set<CreationID> = []
        var stack: [(CreationID, [CreationID])] = [(start, [start])]
        while let (id, chain) = stack.popLast() {
            if id == end { return chain.compactMap { creatingKeys[$0] } }
            guard visited.insert(id).inserted else { continue }
            for next in waits[id] ?? [] { stack.append((next, chain + [next])) }
        }
        return nil
    }
}

/// The created singletons by key. A service without a name (nearly all of them) is kept by its
/// type's identity alone, so the hot path hashes one word, as a dictionary keyed by
/// `ObjectIdentifier` does, rather than a type identity and an optional string.
struct CreatedInstances {
    private var unnamed: [ObjectIdentifier: ServiceInstance] = [:]
    private var named: [ServiceKey: ServiceInstance] = [:]

    subscript(key: ServiceKey) -> ServiceInstance? {
        get { key.name == nil ? unnamed[key.id] : named[key] }
        set {
            if key.name == nil {
                unnamed[key.id] = newValue
            } else {
                named[key] = newValue
            }
        }
    }
}

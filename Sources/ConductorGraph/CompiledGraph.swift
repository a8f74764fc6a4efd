/// A graph's ids and dependencies resolved to positions while it is being built.
///
/// Tasks are almost always added after what they depend on. While that holds (and no id is
/// empty or repeated, and no task's settings invalid) the graph cannot have a cycle or an
/// unknown dependency, so it needs no validation, and its run takes the index and the edges
/// as they are instead of hashing every id again. The first task that breaks the rule
/// switches this off; the full validation then decides, and the run resolves ids itself.
///
/// The dependencies are one flat table (node `i`'s are
/// `dependencies[dependencyStart[i] ..< dependencyStart[i + 1]]`), not an array per node.
struct CompiledGraph: Sendable {
    /// Positions by id, of the definitions the graph holds (``NodeIndex``).
    private(set) var index = NodeIndex()
    private(set) var dependencyStart: [Int32] = [0]
    private(set) var dependencies: [GraphTopology.Edge] = []
    private(set) var isComplete = true
    /// How many nodes depend on nothing: room for the ready queue's roots at the start of a run,
    /// which a no-op graph fills and a graph of pending tasks barely uses.
    private(set) var independentCount = 0

    init() {}

    init(_ definitions: [NodeDefinition]) {
        for position in definitions.indices { append(position, of: definitions) }
    }

    /// How many nodes the table holds.
    var count: Int { dependencyStart.count - 1 }

    /// Takes in `definitions[position]`, the definition after the last one taken in.
    mutating func append(_ position: Int, of definitions: [NodeDefinition]) {
        guard isComplete else { return }
        let definition = definitions[position]
        guard !definition.id.isEmpty, count < Int(Int32.max) else { return abandon() }
        if case .task(let spec) = definition.kind, spec.hasInvalidSetting { return abandon() }
        let first = dependencies.count
        for id in definition.requires {
            guard let position = index.position(of: id, in: definitions) else { return abandon() }
            dependencies.append(GraphTopology.Edge(node: position, requiresSuccess: true))
        }
        for id in definition.after {
            guard let position = index.position(of: id, in: definitions) else { return abandon() }
            dependencies.append(GraphTopology.Edge(node: position, requiresSuccess: false))
        }
        // A repeated id: found, not added.
        guard dependencies.count <= Int(Int32.max), index.insert(definition.id, at: Int32(count), in: definitions)
        else {
            dependencies.removeSubrange(first...)
            return abandon()
        }
        if dependencies.count == first { independentCount += 1 }
        dependencyStart.append(Int32(dependencies.count))
    }

    private mutating func abandon() {
        isComplete = false
        index = NodeIndex()
        dependencyStart = [0]
        dependencies = []
        independentCount = 0
    }
}

/// Checks definitions before anything runs: ids, durations, retry counts, dependencies, stage
/// order, cycles.
package enum GraphValidation {
    /// Validates `definitions`, which may depend on each other only.
    ///
    /// - Complexity: O(V + E).
    package static func validate(_ definitions: [NodeDefinition]) throws(GraphError) {
        try check(definitions).check(against: GraphTopology())
    }

    /// Definitions checked on their own: ids, settings, stage order and cycles among them.
    /// What depends on a running graph — an id it already has, a dependency on a node only it
    /// has — is left to ``check(against:)``, the one part that needs the graph's lock: a run's
    /// additions are validated before its lock is taken, and hold it only for lookups.
    struct Checked {
        fileprivate let definitions: [NodeDefinition]
        fileprivate let position: [String: Int]

        /// Checks the definitions, but for the first `skipped` (which the graph holds
        /// already), against the nodes a graph already has: no id taken, every dependency
        /// known (among the definitions or the nodes).
        ///
        /// - Complexity: O(V + E) of the definitions.
        func check(against existing: GraphTopology, skippingFirst skipped: Int = 0) throws(GraphError) {
            let definitions = self.definitions.dropFirst(skipped)
            for definition in definitions where existing.position(of: definition.id) != nil {
                throw .duplicateID(definition.id)
            }
            // Each list on its own, not `requires + after`: this runs under the run's lock,
            // where a concatenated array per definition would be an allocation each.
            func checkKnown(_ dependencies: [String], of id: String) throws(GraphError) {
                for dependency in dependencies
                where (position.isEmpty || position[dependency] == nil) && existing.position(of: dependency) == nil {
                    throw .unknownDependency(dependency, of: id)
                }
            }
            for definition in definitions {
                try checkKnown(definition.requires, of: definition.id)
                try checkKnown(definition.after, of: definition.id)
            }
        }
    }

    /// Checks `definitions` on their own (see ``Checked``); a dependency on none of them is
    /// left for ``Checked/check(against:)``.
    ///
    /// - Complexity: O(V + E).
    static func check(_ definitions: [NodeDefinition]) throws(GraphError) -> Checked {
        if definitions.count == 1, let checked = try checkAlone(definitions) { return checked }
        var position: [String: Int] = [:]
        position.reserveCapacity(definitions.count)
        for (index, definition) in definitions.enumerated() {
            if definition.id.isEmpty { throw .emptyID() }
            if position.updateValue(index, forKey: definition.id) != nil {
                throw .duplicateID(definition.id)
            }
            if case .task(let spec) = definition.kind, let invalid = spec.invalidSetting(of: definition.id) {
                throw invalid
            }
        }
        for definition in definitions {
            try checkStageOrder(of: definition, definitions, position: position)
        }
        if let cycle = findCycle(definitions, position: position) {
            throw .cycle(names(of: cycle, definitions))
        }
        return Checked(definitions: definitions, position: position)
    }

    /// One definition that names no stage and does not depend on itself (a task added to a
    /// running run), checked without building an index or searching for a cycle: it can have
    /// none, and the checks against the run look its dependencies up in the run's own index.
    /// `nil` for any other definition, which the full check takes.
    ///
    /// - Complexity: O(1).
    private static func checkAlone(_ definitions: [NodeDefinition]) throws(GraphError) -> Checked? {
        let definition = definitions[0]
        guard definition.stageIndex == nil, !definition.requires.contains(definition.id),
            !definition.after.contains(definition.id)
        else { return nil }
        if definition.id.isEmpty { throw .emptyID() }
        if let spec = definition.spec, let invalid = spec.invalidSetting(of: definition.id) { throw invalid }
        return Checked(definitions: definitions, position: [:])
    }

    /// A step that needs a step of a later stage would wait for that stage, which waits for
    /// this one: a cycle through the stage barriers that the user never wrote, so it gets a
    /// message of its own.
    private static func checkStageOrder(
        of definition: NodeDefinition,
        _ definitions: [NodeDefinition],
        position: [String: Int]
    ) throws(GraphError) {
        guard let own = definition.stageIndex else { return }
        for dependency in definition.requires {
            guard let index = position[dependency], let theirs = definitions[index].stageIndex, theirs > own else {
                continue
            }
            throw .laterStage(
                definition.id, in: definition.stage ?? "", dependsOn: dependency, in: definitions[index].stage ?? "")
        }
    }

    /// A cycle in the names the user wrote: a stage's barrier reads as the stage, and a
    /// launch chain's marker (which only keeps the order tasks were added in) is left out.
    /// The internal ids of markers never reach a message.
    private static func names(of cycle: [Int], _ definitions: [NodeDefinition]) -> [String] {
        var names: [String] = cycle.dropLast().compactMap { index in
            let definition = definitions[index]
            guard definition.isHidden else { return definition.id }
            if case .marker(_, let stage?) = definition.kind { return "stage '\(stage)'" }
            return nil
        }
        if let first = names.first { names.append(first) }
        return names
    }

    /// An iterative depth-first search; returns the first cycle found as a closed path of positions.
    private static func findCycle(_ definitions: [NodeDefinition], position: [String: Int]) -> [Int]? {
        enum Color: UInt8 { case white, grey, black }
        let edges: [[Int]] = definitions.map { definition in
            (definition.requires + definition.after).compactMap { position[$0] }
        }
        var color = [Color](repeating: .white, count: definitions.count)
        var stack: [(node: Int, next: Int)] = []
        for root in definitions.indices where color[root] == .white {
            color[root] = .grey
            stack.append((root, 0))
            while let top = stack.last {
                if top.next < edges[top.node].count {
                    stack[stack.count - 1].next += 1
                    let target = edges[top.node][top.next]
                    switch color[target] {
                    case .white:
                        color[target] = .grey
                        stack.append((target, 0))
                    case .grey:
                        let start = stack.firstIndex { $0.node == target }!
                        return stack[start...].map(\.node) + [target]
                    case .black:
                        break
                    }
                } else {
                    color[top.node] = .black
                    stack.removeLast()
                }
            }
        }
        return nil
    }
}

/// Checks definitions before anything runs: ids, dependencies, cycles.
enum GraphValidation {
    /// Validates `definitions`, which may depend on each other and on `existing` nodes.
    /// Existing nodes never depend on new ones, so a cycle can only run through new nodes.
    ///
    /// - Complexity: O(V + E).
    static func validate(_ definitions: [NodeDefinition], existing: [String: Int32] = [:]) throws(GraphError) {
        var position: [String: Int] = [:]
        position.reserveCapacity(definitions.count)
        for (index, definition) in definitions.enumerated() {
            if definition.id.isEmpty { throw .emptyID() }
            if existing[definition.id] != nil || position.updateValue(index, forKey: definition.id) != nil {
                throw .duplicateID(definition.id)
            }
        }
        for definition in definitions {
            for dependency in definition.requires + definition.after
            where position[dependency] == nil && existing[dependency] == nil {
                throw .unknownDependency(dependency, of: definition.id)
            }
        }
        if let cycle = findCycle(definitions, position: position) {
            throw .cycle(cycle)
        }
    }

    /// An iterative depth-first search; returns the first cycle found as a closed path of ids.
    private static func findCycle(_ definitions: [NodeDefinition], position: [String: Int]) -> [String]? {
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
                        let path = stack[start...].map { definitions[$0.node].id } + [definitions[target].id]
                        return path
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

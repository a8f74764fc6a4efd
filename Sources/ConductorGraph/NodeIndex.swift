/// Each node's position by its id: an open-addressing table of node positions whose keys are
/// the ids the definitions already hold.
///
/// A `[String: Int32]` stores every id a second time beside its position: 20 bytes an entry,
/// about 53 a node with a hash table's room to spare, where a run of many pending tasks is
/// held to a per-task memory budget (Benchmarks/README.md, issue 36). Here a slot is the
/// position alone, 4 bytes, and a lookup compares the id it looks for with the id of the
/// definition a slot names — so every call takes the definitions the positions refer to,
/// which must hold every id indexed so far.
///
/// Linear probing over a power-of-two number of slots, filled to at most three quarters; a
/// table that grows hashes each id again (as a `Dictionary` does, which keeps no hashes either).
/// Ids are never removed.
struct NodeIndex: Sendable {
    /// A node's position, or ``empty``.
    private var slots: [Int32] = []
    private(set) var count = 0

    private static let empty: Int32 = -1

    init() {}

    /// The position of the node called `id`, if one is.
    ///
    /// - Complexity: O(1) on average.
    func position(of id: String, in definitions: [NodeDefinition]) -> Int32? {
        guard !slots.isEmpty else { return nil }
        return slots.withUnsafeBufferPointer { slots in
            let mask = slots.count - 1
            var slot = id.hashValue & mask
            while true {
                let node = slots[slot]
                if node == Self.empty { return nil }
                if definitions[Int(node)].id == id { return node }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Whether a node is called `id`.
    func contains(_ id: String, in definitions: [NodeDefinition]) -> Bool {
        position(of: id, in: definitions) != nil
    }

    /// Indexes node `node`, called `id`, unless a node of that name is indexed already: returns
    /// whether it was added. `definitions` holds every node indexed before; `id` need not be in
    /// it yet.
    @discardableResult
    mutating func insert(_ id: String, at node: Int32, in definitions: [NodeDefinition]) -> Bool {
        if (count + 1) * 4 > slots.count * 3 { grow(toHold: count + 1, in: definitions) }
        let hash = id.hashValue
        let added = slots.withUnsafeMutableBufferPointer { slots in
            let mask = slots.count - 1
            var slot = hash & mask
            while true {
                let existing = slots[slot]
                if existing == Self.empty {
                    slots[slot] = node
                    return true
                }
                if definitions[Int(existing)].id == id { return false }
                slot = (slot + 1) & mask
            }
        }
        if added { count += 1 }
        return added
    }

    /// Makes room for `count` entries in all, at least doubling the slots when it must grow: a
    /// run that gets a few nodes at a time rehashes a logarithmic number of times.
    mutating func reserveCapacity(_ count: Int, in definitions: [NodeDefinition]) {
        guard count * 4 > slots.count * 3 else { return }
        grow(toHold: count, in: definitions)
    }

    private mutating func grow(toHold wanted: Int, in definitions: [NodeDefinition]) {
        var size = Swift.max(8, 2 * slots.count)
        while wanted * 4 > size * 3 { size *= 2 }
        let old = slots
        slots = [Int32](repeating: Self.empty, count: size)
        let mask = size - 1
        slots.withUnsafeMutableBufferPointer { slots in
            for node in old where node != Self.empty {
                var slot = definitions[Int(node)].id.hashValue & mask
                while slots[slot] != Self.empty { slot = (slot + 1) & mask }
                slots[slot] = node
            }
        }
    }
}

/// What a service is registered under: its type and an optional name. Hashing and equality
/// use only the type's identity and the name, so a lookup is cheap.
struct ServiceKey: Hashable, Sendable, CustomStringConvertible {
    let id: ObjectIdentifier
    let name: String?
    let type: any Any.Type

    init(_ type: any Any.Type, name: String?) {
        self.id = ObjectIdentifier(type)
        self.name = name
        self.type = type
    }

    static func == (lhs: ServiceKey, rhs: ServiceKey) -> Bool {
        lhs.id == rhs.id && lhs.name == rhs.name
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
    }

    var description: String {
        if let name { return "\(type)[\"\(name)\"]" }
        return "\(type)"
    }
}

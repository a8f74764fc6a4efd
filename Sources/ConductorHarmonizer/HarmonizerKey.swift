/// A typed name for a value stashed in a ``Harmonizer``, so reading it back needs no cast.
///
/// ```swift
/// import Foundation
///
/// extension HarmonizerKey where Value == URL {
///     static let originalSong = HarmonizerKey("original-song")
/// }
///
/// harmonizer.stash(fileURL, as: .originalSong)
/// // later, with the outcome:
/// if case .completed(let stash) = await harmonizer.outcome { let url: URL? = stash[.originalSong] }
/// ```
///
/// A typed key and a string key with the same name refer to the same entry.
public struct HarmonizerKey<Value: Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The entry's name in the stash.
    public let name: String

    /// A key for the entry called `name`.
    public init(_ name: String) {
        self.name = name
    }

    public var description: String { name }
}

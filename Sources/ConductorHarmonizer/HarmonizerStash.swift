/// The values stashed in a ``Harmonizer`` while it waited, handed to its outcome.
///
/// Each participant stashes its result under a key as it finishes, from whatever module
/// or thread it runs on; whoever waits for the outcome reads them all at once:
///
/// ```swift
/// import Foundation
///
/// harmonizer.stash(recordingURL, as: "last-recording")
/// harmonizer.stash(songURL, as: .originalSong)  // a typed HarmonizerKey<URL>
///
/// if case .completed(let stash) = await harmonizer.outcome {
///     let recording = stash["last-recording"] as? URL
///     let song: URL? = stash[.originalSong]
/// }
/// ```
///
/// Stashing again under the same key replaces the earlier value.
public struct HarmonizerStash: Sendable {
    private var values: [String: any Sendable]

    /// An empty stash.
    public init() {
        values = [:]
    }

    /// The value stashed under `key`, if any.
    public subscript(key: String) -> (any Sendable)? {
        values[key]
    }

    /// The value stashed under `key`, if there is one of the key's type.
    public subscript<Value>(key: HarmonizerKey<Value>) -> Value? {
        values[key.name] as? Value
    }

    /// The names of the stashed values, in no particular order.
    public var keys: some Collection<String> { values.keys }

    /// How many values are stashed.
    public var count: Int { values.count }

    /// Whether nothing was stashed.
    public var isEmpty: Bool { values.isEmpty }

    /// Stores `value` under `key`, replacing what was there.
    mutating func store(_ value: any Sendable, forKey key: String) {
        values[key] = value
    }
}

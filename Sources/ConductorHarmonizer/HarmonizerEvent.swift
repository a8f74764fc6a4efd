/// What happened to a ``Harmonizer``, as its ``Harmonizer/events`` sequence reports it.
///
/// ```swift
/// for await event in harmonizer.events {
///     print(event)  // entered(avatar), left(avatar), …, finished(completed(2 stashed))
/// }
/// ```
///
/// Only participants that enter and leave by name are journaled: anonymous
/// ``Harmonizer/enter()`` and ``Harmonizer/leave()`` are a single atomic operation on the
/// counter, kept that cheap on purpose. The sequence ends after ``finished(_:)``.
public enum HarmonizerEvent: Sendable, CustomStringConvertible {
    /// A named participant entered; `count` is the counter afterwards.
    case entered(String, count: Int)
    /// A named participant left; `count` is the counter afterwards.
    case left(String, count: Int)
    /// The harmonizer ended.
    case finished(Harmonizer.Outcome)

    public var description: String {
        switch self {
        case .entered(let participant, let count): "entered(\(participant), count: \(count))"
        case .left(let participant, let count): "left(\(participant), count: \(count))"
        case .finished(let outcome): "finished(\(outcome))"
        }
    }
}

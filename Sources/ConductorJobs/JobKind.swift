/// A kind of job: a stable name and the `Codable` payload its jobs carry.
///
/// ```swift
/// struct PlaceOrder: JobKind {
///     static let name = "place-order"
///     struct Payload: Codable, Sendable { var orderID: String; var cents: Int }
/// }
/// queue.register(PlaceOrder.self) { order, context in
///     try await shop.place(order, idempotencyKey: context.idempotencyKey)
/// }
/// ```
///
/// The name is what the file records: keep it stable across versions of the app, and keep the
/// payload decodable from what older versions wrote (a job whose payload no longer decodes ends
/// ``JobState/failed`` with ``JobQueueError/Code/payloadUndecodable``).
public protocol JobKind: Sendable {
    /// What a job of this kind carries; stored as JSON.
    associatedtype Payload: Codable & Sendable
    /// The kind's name in the file.
    static var name: String { get }
}

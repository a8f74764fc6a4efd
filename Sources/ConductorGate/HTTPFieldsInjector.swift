public import HTTPTypes
public import Instrumentation

/// Writes a trace context into `HTTPFields`: what ``RequestGate`` hands a tracer's `inject`,
/// so each outgoing request carries the W3C `traceparent` (or whatever the bootstrapped tracer
/// propagates) before its transport sees it.
///
/// ```swift
/// var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/")
/// if let context = ServiceContext.current {
///     InstrumentationSystem.instrument.inject(context, into: &request.headerFields, using: HTTPFieldsInjector())
/// }
/// ```
///
/// A key that is not a valid field name is dropped; a field already present is replaced, so a
/// request that is sent again carries the context of its latest attempt only.
///
/// - Complexity: O(fields) per injected value.
public struct HTTPFieldsInjector: Injector {
    /// An injector; it holds nothing.
    public init() {}

    /// Sets the field named `key` to `value`, replacing any field of that name.
    ///
    /// - Parameters:
    ///   - value: The value, as the instrument encodes it (`00-<trace>-<span>-01` for `traceparent`).
    ///   - key: The field's name; dropped if it is not a valid one.
    ///   - carrier: The request's header fields.
    public func inject(_ value: String, forKey key: String, into carrier: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        carrier[name] = value
    }
}

import Foundation

/// A value behind an `NSLock`. Conductor's own `Lock` is internal to the library; `NSLock`
/// is a pthread mutex, whose hand-overs ThreadSanitizer sees on Linux too.
final class Guarded<Value>: @unchecked Sendable {
    // `@unchecked Sendable` is safe: `value` is only read or written inside `withLock`,
    // under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

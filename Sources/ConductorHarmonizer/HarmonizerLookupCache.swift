import ConductorThreadSlot
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Each thread's memory of the last name it looked up in a ``HarmonizerRegistry``, so counting
/// one name down again and again takes neither the registry's lock nor a retain.
///
/// A registry's names change only under its lock, and every change gives the registry a new
/// *stamp*, drawn from one process-wide 64-bit sequence (unique across registries, never
/// reused). A thread that looked `name` up under the lock remembers the stamp it saw, the name
/// and the harmonizer found, holding a strong reference of its own. Later, while the registry's
/// stamp is still that one, no name has been added or removed since, so the same harmonizer is
/// still the one waiting under `name` — the thread uses it without locking or retaining.
///
/// Why not a table shared by all threads: a reader of shared, replaceable memory must retain
/// what it reads (or announce itself some other way) so that a writer does not free it under
/// the reader, and that retain is an atomic read-modify-write on a cache line both counting
/// threads write — the cost this removes. Memory owned by the thread needs no such care.
///
/// The cost of that: each thread keeps the last harmonizer it looked up alive (with its
/// outcome) until it looks up something else or exits — at most one per thread.
final class HarmonizerLookupCache {
    /// Keeps another thread's cache, or a harmonizer's counter, off this cache's cache lines:
    /// this one is written on every lookup.
    private let leadingPadding = CacheLinePadding()
    private var stamp: UInt64 = 0
    private var name = ""
    private var harmonizer: Unmanaged<Harmonizer>?

    deinit { harmonizer?.release() }

    /// Whether a harmonizer borrowed from this cache is in use further up this thread's stack.
    /// Code run from there (an immediate completion counting another name down) must then not
    /// replace the entry: that could release the harmonizer being borrowed.
    private var borrowed = false
    private let trailingPadding = CacheLinePadding()

    /// Runs `body` with the harmonizer remembered for `name` if it was found under `stamp`;
    /// on a miss, runs `miss` instead, which looks the name up and may ``remember(_:_:stamp:)`` it.
    @inline(__always)
    func withHarmonizer<Result>(
        _ name: String,
        stamp: UInt64,
        _ body: (Harmonizer) -> Result,
        miss: () -> Result
    ) -> Result {
        guard !borrowed, self.stamp == stamp, let harmonizer, self.name == name else { return miss() }
        // The strong reference this cache holds keeps the harmonizer alive while `body` runs:
        // only this thread changes the cache, and `borrowed` stops it from doing so meanwhile.
        borrowed = true
        defer { borrowed = false }
        return harmonizer._withUnsafeGuaranteedRef(body)
    }

    /// The harmonizer remembered for `name` if it was found under `stamp`, unretained: the
    /// cache's own strong reference keeps it alive until this thread changes the cache, so a
    /// caller may use it only until it runs code that could (any user code); to go further it
    /// takes a strong reference first. Reading does not change the cache, so it is allowed
    /// while a borrowed harmonizer is in use further up the stack.
    ///
    /// Only the same string counts: its bits, not its characters, are compared, so that no call
    /// is made (an equal name made another way goes the general way, ``withHarmonizer(_:stamp:_:miss:)``).
    @inline(__always)
    func remembered(sameString name: String, stamp: UInt64) -> Unmanaged<Harmonizer>? {
        guard self.stamp == stamp, let harmonizer, Self.sameBits(self.name, name) else { return nil }
        return harmonizer
    }

    /// Whether two strings are the same value bit for bit (equal; not every equal pair is).
    @inline(__always)
    private static func sameBits(_ a: String, _ b: String) -> Bool {
        #if _pointerBitWidth(_64)
            let (a0, a1) = unsafeBitCast(a, to: (UInt64, UInt64).self)
            let (b0, b1) = unsafeBitCast(b, to: (UInt64, UInt64).self)
            return (a0 ^ b0) | (a1 ^ b1) == 0
        #else
            return a == b
        #endif
    }

    /// Remembers that `name` named `harmonizer` (or nothing) while the registry's stamp was `stamp`.
    func remember(_ name: String, _ harmonizer: Harmonizer?, stamp: UInt64) {
        guard !borrowed else { return }
        let previous = self.harmonizer
        self.harmonizer = harmonizer.map { Unmanaged.passRetained($0) }
        self.stamp = harmonizer == nil ? 0 : stamp
        self.name = name
        previous?.release()
    }

    /// The calling thread's cache if it has one yet: a load from the thread's own storage.
    @inline(__always)
    static var installed: Unmanaged<HarmonizerLookupCache>? {
        conductor_harmonizer_lookup_cache_get().map { Unmanaged.fromOpaque($0) }
    }

    /// The calling thread's cache: a load from the thread's own storage (`ConductorThreadSlot`).
    @inline(__always)
    static func current() -> Unmanaged<HarmonizerLookupCache> {
        if let pointer = conductor_harmonizer_lookup_cache_get() { return Unmanaged.fromOpaque(pointer) }
        return install()
    }

    /// Makes the calling thread's cache. The thread-local slot holds it for lookups; the
    /// pthread key holds it too, only so that its destructor releases it when the thread exits.
    @inline(never)
    private static func install() -> Unmanaged<HarmonizerLookupCache> {
        let cache = Unmanaged.passRetained(HarmonizerLookupCache())
        pthread_setspecific(key, cache.toOpaque())
        conductor_harmonizer_lookup_cache_set(cache.toOpaque())
        return cache
    }

    /// One key for every registry; its destructor, run on the exiting thread, clears the
    /// thread's slot and releases its cache. (A lookup made after that, from another key's
    /// destructor, makes a new cache, which glibc's next destructor round releases.)
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
            conductor_harmonizer_lookup_cache_set(nil)
            #if canImport(Darwin)
                Unmanaged<HarmonizerLookupCache>.fromOpaque(pointer).release()
            #else
                if let pointer { Unmanaged<HarmonizerLookupCache>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(created == 0, "pthread_key_create failed (\(created))")
        return key
    }()
}

@available(*, unavailable)
extension HarmonizerLookupCache: Sendable {}

/// The process-wide source of registry stamps. 64 bits even where `Int` has 32, so a stamp is
/// never reused: a stale cache entry can never match a later state of any registry.
private let stamps = Atomic<UInt64>(0)

extension HarmonizerLookupCache {
    /// A stamp no registry state has had before.
    static func nextStamp() -> UInt64 {
        stamps.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

/// 64 bytes that keep the fields around them off a neighbouring object's cache line.
struct CacheLinePadding {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}

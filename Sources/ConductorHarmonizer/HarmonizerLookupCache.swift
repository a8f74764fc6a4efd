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

    /// Remembers that `name` named `harmonizer` (or nothing) while the registry's stamp was `stamp`.
    func remember(_ name: String, _ harmonizer: Harmonizer?, stamp: UInt64) {
        guard !borrowed else { return }
        let previous = self.harmonizer
        self.harmonizer = harmonizer.map { Unmanaged.passRetained($0) }
        self.stamp = harmonizer == nil ? 0 : stamp
        self.name = name
        previous?.release()
    }

    /// The calling thread's cache. `key` is ``key``, passed in from a copy the caller keeps so
    /// that the hot path does not check the global's lazy initialisation every time.
    @inline(__always)
    static func current(_ key: pthread_key_t) -> Unmanaged<HarmonizerLookupCache> {
        if let pointer = pthread_getspecific(key) { return Unmanaged.fromOpaque(pointer) }
        return install(key)
    }

    private static func install(_ key: pthread_key_t) -> Unmanaged<HarmonizerLookupCache> {
        let cache = Unmanaged.passRetained(HarmonizerLookupCache())
        pthread_setspecific(key, cache.toOpaque())
        return cache
    }

    /// One key for every registry; the destructor releases a thread's cache when it exits.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { pointer in
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

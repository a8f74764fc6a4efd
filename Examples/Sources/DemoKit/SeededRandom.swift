/// SplitMix64: a tiny generator whose output depends only on its seed, so a seed replays
/// the same latencies.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A generator for one (seed, name, occurrence): the same request gets the same latency
    /// however the requests interleave.
    static func derived(seed: UInt64, name: String, occurrence: Int) -> SeededRandom {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a, stable across runs unlike Hasher
        for byte in name.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return SeededRandom(seed: seed ^ hash ^ (UInt64(occurrence) &* 0x9E37_79B9))
    }
}

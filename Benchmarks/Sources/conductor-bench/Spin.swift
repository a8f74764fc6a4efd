import Synchronization

/// Read at run time, so the optimiser cannot know what `spin` computes and remove it.
private let spinState = Atomic<UInt64>(0x9E37_79B9_7F4A_7C15)

/// CPU-bound work the optimiser cannot remove: `iterations` rounds of xorshift on a value it
/// reads at run time, the result compared with a value it cannot take (a nonzero xorshift
/// state stays nonzero), which the compiler does not know. No memory traffic, no sharing.
@inline(never)
func spin(_ iterations: Int) {
    var x = spinState.load(ordering: .relaxed)
    for _ in 0..<iterations {
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
    }
    if x == 0 { spinState.store(1, ordering: .relaxed) }
}

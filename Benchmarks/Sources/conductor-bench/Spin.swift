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

/// `spin` iterations per microsecond of this machine, measured once (or set by the parent of a
/// pinned copy, so that both placements run the same work).
private let spinRate = Mutex<Int?>(nil)

func setSpinIterationsPerMicrosecond(_ rate: Int) {
    spinRate.withLock { $0 = rate }
}

/// Calibrated on first use: the fastest of 7 timed runs of a million iterations (~a few ms
/// each), so that another process's time slice does not make the body shorter than its name.
func spinIterationsPerMicrosecond() -> Int {
    spinRate.withLock { rate in
        if let rate { return rate }
        let iterations = 1_000_000
        var fastest = UInt64.max
        for _ in 0..<7 {
            let start = nanoseconds()
            spin(iterations)
            fastest = min(fastest, nanoseconds() - start)
        }
        let measured = max(1, Int(Double(iterations) * 1_000 / Double(max(fastest, 1))))
        rate = measured
        return measured
    }
}

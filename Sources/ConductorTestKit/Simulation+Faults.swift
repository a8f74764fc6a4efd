import Conductor

extension Simulation {
    /// Asks the fault plan whether to fail, cancel or delay at `point` this time, and does it:
    /// throws the ``InjectedFault`` for a failure, cancels the current task and throws
    /// `CancellationError` for a cancellation, sleeps on ``clock`` for a delay, and returns at
    /// once when there is no fault.
    ///
    /// Call it where a fault could strike in real life — at the top of a task body, before a
    /// transport sends (``FaultInjectingTransport`` does) — with a name the plan knows:
    ///
    /// ```swift
    /// try launcher.add(ClosureStartupTask("thumbnails", options: TaskOptions(failure: .optional)) {
    ///     try await simulation.injectFault(at: "thumbnails")
    ///     thumbnails.store(try await fetchThumbnails())
    /// })
    /// ```
    ///
    /// The draw depends only on the seed, `point`, `key` and how often the point was visited
    /// with that key before, so a seed injects the same faults every time it runs. Give a
    /// `key` (a request's path, say) when several tasks visit one point in an order the seed
    /// picks: the visits are then counted per key, and each key's faults stay the same
    /// however the visits interleave. Each injected fault is in the run's
    /// ``SimulationRun/faults`` and, as `fault: …`, in its trace.
    public func injectFault(at point: String, key: String? = nil) async throws {
        guard let fault = drawFault(at: point, key: key) else { return }
        if let delay = fault.kind.delay {
            try await clock.sleep(for: delay)
        } else if fault.kind == .cancel {
            withUnsafeCurrentTask { $0?.cancel() }
            throw CancellationError()
        } else {
            throw fault
        }
    }

    /// Whether the fault plan injects a fault at `point` this time, for code that handles the
    /// fault itself — a fake that answers 503 instead of throwing, say. Counts as a visit and
    /// records the fault as ``injectFault(at:key:)`` does; doing it is up to you.
    public func fault(at point: String, key: String? = nil) -> InjectedFault.Kind? {
        drawFault(at: point, key: key)?.kind
    }
}

/// A draw in `0..<1` from the seed, a point, its key and the visit: FNV-1a over the names (the
/// standard library's `Hasher` is seeded per process, so it would not replay), mixed with the
/// seed and the visit by SplitMix64.
enum FaultDraw {
    static func unit(seed: UInt64, point: String, key: String?, visit: Int) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        for byte in point.utf8 { mix(byte) }
        mix(0xff)  // not UTF-8: keeps ("ab", "c") apart from ("a", "bc")
        if let key {
            mix(1)
            for byte in key.utf8 { mix(byte) }
        }
        var generator = SplitMix64(seed: seed ^ hash)
        var mixed = SplitMix64(seed: generator.next() ^ UInt64(truncatingIfNeeded: visit))
        return Double(mixed.next() >> 11) * 0x1p-53
    }
}

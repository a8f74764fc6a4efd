import Foundation

/// A fresh path in the temporary folder for one test's database; the file and its WAL and
/// shared-memory companions are removed when the value goes away.
final class TemporaryFile: Sendable {
    let path: String

    init(_ name: String = "jobs") {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("conductor-\(name)-\(UUID().uuidString).sqlite").path
    }

    deinit {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

import Conductor
import Logging
import Testing

/// Issue 18 §5: misuse of a registry is logged by default — once per name, at warning level —
/// and stays a no-op; an installed misuse handler replaces the log.
@Suite struct HarmonizerRegistryMisuseLogTests {
    @Test func misuseIsLoggedOncePerNameAsAWarning() throws {
        let handler = CapturingLogHandler()
        let registry = HarmonizerRegistry(logger: Logger(label: "test") { _ in handler })
        try registry.create("page", count: 0, on: .immediate) { _ in }

        #expect(!registry.leave("nobody"))
        #expect(!registry.leave("nobody"))
        #expect(!registry.enter("nobody"))
        #expect(!registry.leave("page"))
        #expect(!registry.leave("page"))

        let lines = handler.lines.all
        #expect(
            lines.map(\.message) == [
                "leave('nobody') ignored: no harmonizer named 'nobody' is waiting",
                "leave('page') ignored: its counter is already zero",
            ])
        #expect(lines.map(\.level) == [.warning, .warning])
        #expect(lines.first?.metadata["harmonizer"] == "nobody")
        #expect(lines.first?.metadata["code"] == "unknownName")
        #expect(registry.count("page") == 0, "still a no-op: nothing counted")
    }

    @Test func eachRegistryLogsANameOnce() throws {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        let first = HarmonizerRegistry(logger: logger)
        let second = HarmonizerRegistry(logger: logger)
        #expect(!first.leave("nobody"))
        #expect(!second.leave("nobody"))
        #expect(!first.leave("nobody"))
        #expect(handler.lines.all.count == 2)
    }

    @Test func aMisuseHandlerReplacesTheLogAndHearsEveryMisuse() throws {
        let handler = CapturingLogHandler()
        let registry = HarmonizerRegistry(logger: Logger(label: "test") { _ in handler })
        let reports = Recorder<HarmonizerError>()
        registry.onMisuse { reports.append($0) }
        #expect(!registry.leave("nobody"))
        #expect(!registry.leave("nobody"))
        #expect(reports.all.count == 2)
        #expect(handler.lines.all.isEmpty)
    }
}

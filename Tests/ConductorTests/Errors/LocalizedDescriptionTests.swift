import Conductor
import Foundation
import HTTPTypes
import Testing

/// What an app shows in an alert is `error.localizedDescription`: for every Conductor error it
/// is the message that names the culprit, never Foundation's "The operation could not be
/// completed. (Conductor.GraphError error 1.)". Each error is raised through the public API.
@Suite struct LocalizedDescriptionTests {
    /// The text an alert shows, and the text a log line shows, for one error.
    private func expectShown(_ error: some Error, message: String, code: String) {
        #expect(error.localizedDescription == message)
        // The description names the type and code once, and the message does not repeat the code.
        #expect("\(error)".hasSuffix(".\(code): \(message)"))
        #expect(!message.hasPrefix("\(code):"))
    }

    @Test func aGraphErrorShowsItsMessage() throws {
        var graph = TaskGraph()
        graph.add("a", dependsOn: ["b"]) { _ in }
        graph.add("b", dependsOn: ["a"]) { _ in }
        let error = try #require(throws: GraphError.self) { try graph.validate() }
        expectShown(error, message: "dependencies form a loop: a → b → a", code: "cycle")
    }

    @Test func aLaunchErrorShowsItsMessage() throws {
        let launcher = Launcher()
        let error = try #require(throws: LaunchError.self) {
            try launcher.add(ClosureStartupTask("a", dependsOn: ["a"]) {})
        }
        expectShown(error, message: "dependencies form a loop: a → a", code: "cycle")
    }

    @Test func aHarmonizerErrorShowsItsMessage() throws {
        let registry = HarmonizerRegistry()
        let error = try #require(throws: HarmonizerError.self) {
            try registry.create("", count: 1, on: .immediate) { _ in }
        }
        expectShown(error, message: "a harmonizer's name is the empty string", code: "emptyName")
    }

    @Test func anAssemblyErrorShowsItsMessage() async throws {
        let assembly = Assembly()
        let error = await #expect(throws: AssemblyError.self) { try await assembly.resolve(Int.self, name: "port") }
        expectShown(try #require(error), message: "no service Int[\"port\"] is registered", code: "unknownService")
    }

    @Test func aSchedulerErrorShowsItsMessage() throws {
        let scheduler = try PriorityScheduler()
        scheduler.shutdown()
        let error = try #require(throws: SchedulerError.self) { try scheduler.submit {} }
        expectShown(error, message: "the scheduler is shut down", code: "shutDown")
    }

    @Test func aReportFormatErrorShowsItsMessage() throws {
        let error = try #require(throws: ReportFormatError.self) {
            try JSONDecoder().decode(RunReport.self, from: Data(#"{"traceEvents": []}"#.utf8))
        }
        expectShown(error, message: "not a Conductor run report: it has no format field", code: "notAReport")
    }

    @Test func aGateErrorShowsItsMessage() async throws {
        let gate = try RequestGate<String>(
            transport: MemoryTransport(validToken: "t0"),
            credential: "t0",
            authorize: { _, _ in },
            refresh: { _ in "t1" })
        gate.shutdown()
        let error = await #expect(throws: GateError.self) {
            try await gate.send(HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/feed"))
        }
        expectShown(try #require(error), message: "GET /feed: the gate was shut down", code: "shutDown")
    }
}

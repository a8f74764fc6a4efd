import Conductor
import ConductorURLSession
import HTTPTypes

/// What start-up produced: the mirror to talk to, the session's token, the remote config.
struct LaunchState: Sendable {
    var mirror: String
    var authority: String
    var token: String
    var config: String
    var latestVersion: String?
}

/// The app's start-up on the library's ``Launcher``: choose the faster of two API mirrors,
/// sign in, load the remote config, check the app version — the independent ones overlap,
/// and the page waits for the readiness set `ready`, not for the version check.
///
/// When the network is gone, each task falls back to what the last visit saved.
struct AppLaunch {
    let mirrors: [(name: String, authority: String)]
    let saved: LaunchState?
    let recorder: Recorder
    let telemetry: Telemetry

    private let transport = DemoTransport(base: URLSessionTransport())

    init(
        mirrors: [(name: String, authority: String)], saved: LaunchState?, recorder: Recorder, telemetry: Telemetry
    ) {
        self.mirrors = mirrors
        self.saved = saved
        self.recorder = recorder
        self.telemetry = telemetry
    }

    /// Runs start-up until it is ready and returns its state, the launch's report, and when
    /// it started and became ready on the demo's clock; throws when a required task failed.
    func run() async throws -> (LaunchState, RunReport, offset: Duration, ready: Duration) {
        let notes = CallNotes()
        let state = Guarded(LaunchState(mirror: "", authority: "", token: "", config: ""))
        let launcher = Launcher(telemetry: telemetry)
        try launcher.add(
            Startup("chooseMirror", dependsOn: []) {
                let (name, authority) = try await chooseMirror(notes: notes)
                state.withLock {
                    $0.mirror = name
                    $0.authority = authority
                }
            })
        try launcher.add(
            Startup("signIn", dependsOn: ["chooseMirror"]) {
                let authority = state.withLock { $0.authority }
                let token = try await fetchOrRecall(
                    "signIn", .post, "/login", authority: authority, notes: notes, saved: saved?.token)
                state.withLock { $0.token = token }
            })
        try launcher.add(
            Startup(
                "loadConfig", dependsOn: ["signIn"],
                options: TaskOptions(retry: .attempts(2, backoff: .milliseconds(50)))
            ) {
                let (authority, token) = state.withLock { ($0.authority, $0.token) }
                let config = try await fetchOrRecall(
                    "loadConfig", .get, "/config", authority: authority, token: token, notes: notes,
                    saved: saved?.config)
                state.withLock { $0.config = config }
            })
        try launcher.add(
            Startup("checkVersion", dependsOn: ["chooseMirror"], options: TaskOptions(failure: .optional)) {
                let authority = state.withLock { $0.authority }
                let version = try await fetchOrRecall(
                    "checkVersion", .get, "/version", authority: authority, notes: notes, saved: nil)
                state.withLock { $0.latestVersion = version }
            })
        try launcher.addReadiness("ready", after: ["chooseMirror", "signIn", "loadConfig"])
        let offset = recorder.now()
        try launcher.start()
        recorder.follow(launcher.events, offset: offset, notes: notes) { _ in "launch" }
        let readiness = try await launcher.ready("ready")
        let ready = recorder.now()
        let report = try await launcher.report().run
        recorder.addRows(
            from: report, offset: offset, group: "launch", details: notes.details, outcomes: notes.outcomes)
        guard readiness.isReady, report.isSuccess else {
            throw DemoFailure("start-up failed: \(report.outcome)")
        }
        return (state.withLock { $0 }, report, offset, ready)
    }

    /// Pings both mirrors at once and takes the first to answer; the slower answer is ignored.
    ///
    /// NB: the loser is not cancelled. On Linux, cancelling a task while its
    /// `URLSession.data(for:)` completes can deadlock inside FoundationNetworking (the cancel
    /// handler hops synchronously onto the session's queue under the task's status lock).
    private func chooseMirror(notes: CallNotes) async throws -> (String, String) {
        let first = AsyncStream<(String, String)?>.makeStream()
        for mirror in mirrors {
            Task {
                let answer: (String, String)? = try? await recorder.measure(
                    "launch", "ping \(mirror.name)", detail: "GET /ping"
                ) {
                    _ = try await send(.get, "/ping", authority: mirror.authority)
                    return (mirror.name, mirror.authority)
                }
                first.continuation.yield(answer)
            }
        }
        var winner: (String, String)?
        var answers = 0
        for await answer in first.stream {
            answers += 1
            if let answer {
                winner = answer
                break
            }
            if answers == mirrors.count { break }
        }
        if let winner {
            notes.note("chooseMirror", "\(winner.0) answered first")
            return winner
        }
        guard let saved else { throw DemoFailure("no mirror answered and no mirror was saved") }
        notes.note("chooseMirror", "offline: using \(saved.mirror) from the last visit", outcome: .fromCache)
        return (saved.mirror, saved.authority)
    }

    private func fetchOrRecall(
        _ id: String, _ method: HTTPRequest.Method, _ path: String, authority: String, token: String? = nil,
        notes: CallNotes, saved: String?
    ) async throws -> String {
        do {
            let body = try await send(method, path, authority: authority, token: token)
            notes.note(id, "\(method) \(path) · 200")
            return body
        } catch {
            guard let saved else { throw error }
            notes.note(id, "\(method) \(path): \(ErrorText.short(error)) · saved value used", outcome: .fromCache)
            return saved
        }
    }

    /// One request straight to the transport: start-up runs before the gate exists.
    private func send(
        _ method: HTTPRequest.Method, _ path: String, authority: String, token: String? = nil
    ) async throws -> String {
        var request = HTTPRequest(method: method, scheme: "http", authority: authority, path: path)
        if let token { request.headerFields[.authorization] = "Bearer \(token)" }
        let reply = try await transport.send(request, body: method == .post ? .bytes([]) : nil)
        let (response, body) = (reply.response, reply.body)
        guard response.status == .ok else { throw DemoFailure("\(method) \(path) answered \(response.status.code)") }
        return String(decoding: body, as: UTF8.self)
    }
}

/// One start-up task of the demo: a name, what it needs, and what it does.
struct Startup: StartupTask {
    let name: String
    let dependencies: TaskDependencies
    let options: TaskOptions
    let work: @Sendable () async throws -> Void

    init(
        _ name: String, dependsOn dependencies: TaskDependencies, options: TaskOptions = TaskOptions(),
        _ work: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.dependencies = dependencies
        self.options = options
        self.work = work
    }

    func run() async throws { try await work() }
}

import Conductor

/// Runs the whole story once against an embedded server: start-up, the services, the
/// product page with its media, in the chosen scenario. `progress` hears about every task as
/// it starts and ends.
///
/// ```swift
/// let report = try await runDemo(DemoOptions(scenario: .tokenExpiry)) { event in print(event) }
/// print(report.verdict)
/// ```
public func runDemo(
    _ options: DemoOptions,
    progress: @escaping @Sendable (ProgressEvent) -> Void = { _ in }
) async throws -> DemoReport {
    let server = try await DemoServer.start(options)
    var saved: (launch: LaunchState, cache: [String: GateResponse])?
    if options.scenario == .offlineWithCache {
        // Yesterday's visit, unrecorded: it leaves a saved session and a full cache behind.
        let yesterday = try await visit(
            server: server, options: options, saved: nil, recorder: Recorder { _ in }, telemetry: .disabled)
        saved = (yesterday.launch, yesterday.cache)
        await server.stop()
        progress(.note("yesterday's visit filled the cache; today both mirrors are unreachable"))
    }
    let recorder = Recorder(progress: progress)
    // Today's visit is traced and measured, as an app's tracer and metrics backend would see it.
    let recording = DemoTelemetry()
    let visit: Visit
    do {
        visit = try await DemoKit.visit(
            server: server, options: options, saved: saved, recorder: recorder, telemetry: recording.telemetry)
    } catch {
        await server.stop()
        throw error
    }
    await server.stop()
    return DemoReport(visit: visit, options: options, recorder: recorder, recording: recording)
}

/// One visit: launch, assemble, load the page.
struct Visit {
    var launch: LaunchState
    var launchReport: RunReport
    var launchOffset: Duration
    var ready: Duration
    var pageReport: RunReport
    var pageOffset: Duration
    var pageNotes: CallNotes
    var cache: [String: GateResponse]
}

func visit(
    server: DemoServer, options: DemoOptions, saved: (launch: LaunchState, cache: [String: GateResponse])?,
    recorder: Recorder, telemetry: Telemetry
) async throws -> Visit {
    recorder.report(.phase("launch"))
    let (launch, launchReport, launchOffset, ready) = try await AppLaunch(
        mirrors: server.authorities, saved: saved?.launch, recorder: recorder, telemetry: telemetry
    ).run()
    recorder.add(Timeline.Marker(kind: .ready, name: "ready", at: ready))

    recorder.report(.phase("services"))
    let assembly = AppServices.assemble(
        launch: launch, savedCache: saved?.cache ?? [:], options: options, recorder: recorder, telemetry: telemetry)
    // Asked for together: the media loader needs the API, whose creation both share.
    async let api = assembly.resolve(ShopAPI.self)
    async let media = assembly.resolve(MediaLoader.self)
    let page = try await ProductPage(api: api, media: media)

    recorder.report(.phase("page"))
    let pageOffset = recorder.now()
    let run = try page.start(telemetry: telemetry)
    recorder.follow(run, offset: pageOffset, notes: page.notes) { ProductPage.stageOfTask[$0] ?? "page" }
    let pageReport = try await run.report()
    recorder.addRows(
        from: pageReport, offset: pageOffset, group: "page", details: page.notes.details,
        outcomes: page.notes.outcomes)
    await page.media.drain()
    await page.api.close()
    let cache = try await assembly.resolve(ResponseStore.self).snapshot
    return Visit(
        launch: launch, launchReport: launchReport, launchOffset: launchOffset, ready: ready, pageReport: pageReport,
        pageOffset: pageOffset, pageNotes: page.notes, cache: cache)
}

extension DemoReport {
    init(visit: Visit, options: DemoOptions, recorder: Recorder, recording: DemoTelemetry) {
        let log = recorder.gateLog
        let network = NetworkSummary(log)
        let milestones = visit.pageReport.milestones.map { (name: $0.name, at: visit.pageOffset + $0.at) }
        let pageCalls = visit.pageReport.tasks.filter { $0.id != "media" }
        let fromCache = pageCalls.filter { visit.pageNotes.outcome(of: $0.id) == .fromCache }.count
        let mediaTimedOut = visit.pageNotes.outcome(of: "media") == .timedOut
        let visible = { (path: [String]) in
            path.filter { !$0.hasPrefix("\u{1}") && !ProductPageMilestones.all.contains($0) }
        }

        self.options = options
        self.timeline = recorder.timeline
        self.launchTime = visit.ready
        self.launchReport = visit.launchReport
        self.pageReport = visit.pageReport
        self.milestones = milestones
        self.pageOutcome = visit.pageReport.outcome
        self.network = network
        self.media = visit.pageNotes.detail(of: "media")
        self.criticalPath = visible(visit.launchReport.criticalPath) + visible(visit.pageReport.criticalPath)
        self.pageCalls = pageCalls.count
        self.pageCallsFromCache = fromCache
        self.spanTree = recording.spanTree()
        self.metrics = recording.metricsTable()

        let ordered =
            milestones.map(\.name) == ["firstScreen", "fullPage"]
            && (milestones.count < 2 || milestones[0].at <= milestones[1].at)
        let firstScreen = milestones.first { $0.name == "firstScreen" }.map { $0.at.shortDescription } ?? "never"
        let fullPage = milestones.first { $0.name == "fullPage" }.map { $0.at.shortDescription } ?? "never"
        let endedOnce = network.everyRequestEndedOnce
        let screens = "first screen at \(firstScreen), full page at \(fullPage)"
        let loaded = Verdict.loaded(pageCalls.filter(\.outcome.isSuccess).count, of: pageCalls.count)
        let refreshes = Verdict.refreshes(network.refreshes)
        switch options.scenario {
        case .normal:
            passed = visit.pageReport.isSuccess && ordered && network.refreshes == 0 && endedOnce
            verdict = "normal: \(loaded), \(screens), \(network.refreshes == 0 ? "no refresh needed" : refreshes)"
        case .tokenExpiry:
            passed =
                visit.pageReport.isSuccess && ordered && network.refreshes == 1 && network.failedRefreshes == 0
                && network.parked > 0 && endedOnce
            verdict =
                "token-expiry: \(refreshes) while \(network.parked) calls waited, then \(loaded); \(screens)"
        case .refreshFails:
            let failedByRefresh = visit.pageReport.tasks.filter {
                visit.pageNotes.detail(of: $0.id).contains("refresh failed")
            }.count
            let notSent = visit.pageReport.tasks.filter {
                let detail = visit.pageNotes.detail(of: $0.id)
                return detail.contains("not sent") || detail.contains("not started")
            }.count
            passed =
                network.failedRefreshes == 1 && network.refreshes == 1 && milestones.first?.name == "firstScreen"
                && endedOnce && failedByRefresh > 0
            verdict =
                "refresh-fails: the refresh was refused \(Verdict.times(network.failedRefreshes)); "
                + "\(failedByRefresh) waiting calls failed with it, "
                + "the app signed out and did not send the \(notSent) calls after them; "
                + "first screen at \(firstScreen)"
        case .slowNetwork:
            passed = milestones.first?.name == "firstScreen" && network.retries > 0 && mediaTimedOut && endedOnce
            verdict =
                "slow-network: \(network.retries) retries after 503s, "
                + (mediaTimedOut ? "the media wait gave up at its limit" : "the media wait did not reach its limit")
                + " (\(visit.pageNotes.detail(of: "media"))); \(screens)"
        case .offlineWithCache:
            passed = visit.pageReport.isSuccess && ordered && fromCache == pageCalls.count && endedOnce
            verdict =
                "offline-with-cache: both mirrors unreachable; \(fromCache) of \(pageCalls.count) calls served "
                + "from the cache; \(screens)"
        }
    }
}

/// The verdict's clauses, worded from the counts so a clause never claims more than happened.
enum Verdict {
    /// "all 12 calls loaded", or "10 of 12 calls loaded, 2 did not".
    static func loaded(_ loaded: Int, of total: Int) -> String {
        loaded == total ? "all \(total) calls loaded" : "\(loaded) of \(total) calls loaded, \(total - loaded) did not"
    }

    /// "exactly one refresh", "no refresh", "2 refreshes".
    static func refreshes(_ count: Int) -> String {
        switch count {
        case 0: "no refresh"
        case 1: "exactly one refresh"
        default: "\(count) refreshes"
        }
    }

    /// "once", "twice", "3 times".
    static func times(_ count: Int) -> String {
        switch count {
        case 1: "once"
        case 2: "twice"
        default: "\(count) times"
        }
    }
}

enum ProductPageMilestones {
    static let all: Set<String> = ["firstScreen", "fullPage"]
}

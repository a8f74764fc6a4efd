import Conductor
import ConductorTestKit
import Testing

/// The seed's product-detail page: four stages with two milestones between them.
@Suite struct ScheduleTests {
    private static func productDetail(log: Recorder<String>) -> Schedule {
        func call(_ id: String) -> Step {
            Step(id) { _ in
                log.append("start \(id)")
                await Task.yield()
                log.append("end \(id)")
            }
        }
        return Schedule {
            Stage("first") { call("basicInfo") }
            Stage("second") {
                call("saleInfo")
                call("itemUniqueInfo")
            }
            Milestone("firstScreen")
            Stage("third") {
                call("logistics")
                call("freight")
            }
            Milestone("secondScreen")
            Stage("fourth") {
                call("recommend")
                call("comments")
            }
        }
    }

    @Test func stagesRunInOrderWithMilestonesBetween() async throws {
        let log = Recorder<String>()
        let run = try Self.productDetail(log: log).start()
        var markers: [String] = []
        for await event in run.events {
            switch event {
            case .stageStarted(let name, _): markers.append("stage \(name)")
            case .milestoneReached(let name, _): markers.append("milestone \(name)")
            case .runFinished(let outcome, _): markers.append("finished \(outcome)")
            default: break
            }
        }
        #expect(
            markers == [
                "stage first", "stage second", "milestone firstScreen", "stage third", "milestone secondScreen",
                "stage fourth", "finished completed",
            ])
        let stageOf = [
            "basicInfo": 1, "saleInfo": 2, "itemUniqueInfo": 2, "logistics": 3, "freight": 3, "recommend": 4,
            "comments": 4,
        ]
        // Every task of stage N ends before any task of stage N+1 starts.
        let entries = log.all
        for (position, entry) in entries.enumerated() where entry.hasPrefix("start ") {
            let stage = stageOf[String(entry.dropFirst(6))]!
            let earlierEnds = entries[..<position].filter { $0.hasPrefix("end ") }.map {
                stageOf[String($0.dropFirst(4))]!
            }
            let expectedEnded = stageOf.values.filter { $0 < stage }.count
            #expect(earlierEnds.filter { $0 < stage }.count == expectedEnded)
        }
        let report = try await run.report()
        #expect(report.milestones.map(\.name) == ["firstScreen", "secondScreen"])
        #expect(report["saleInfo"]?.stage == "second")
    }

    @Test func awaitingAMilestone() async throws {
        let clock = ManualClock()
        let schedule = Schedule {
            Stage("screen") { Step("basicInfo") { _ in } }
            Milestone("firstScreen")
            Stage("rest") { Step("comments") { _ in try await clock.sleep(for: .seconds(5)) } }
            Milestone("fullPage")
        }
        let run = try schedule.start(clock: clock)
        let firstScreen = try await run.reached("firstScreen")
        #expect(firstScreen == .zero)
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(5))
        #expect(try await run.reached("fullPage") == .seconds(5))
        await #expect(throws: GraphError.self) { try await run.reached("nope") }
    }

    @Test func optionalFailureDoesNotHoldTheNextStageBack() async throws {
        struct Offline: Error {}
        let schedule = Schedule {
            Stage("one") { Step("freight", options: TaskOptions(failure: .optional)) { _ in throw Offline() } }
            Stage("two") { Step("comments") { _ in } }
        }
        let report = try await schedule.run()
        #expect(report.isSuccess)
        #expect(report["comments"]?.outcome.isSuccess == true)
    }

    @Test func requiredFailureMissesLaterMilestones() async throws {
        struct Down: Error {}
        let schedule = Schedule {
            Stage("one") { Step("basicInfo") { _ in throw Down() } }
            Milestone("firstScreen")
            Stage("two") { Step("comments") { _ in } }
        }
        let run = try schedule.start()
        let error = await #expect(throws: GraphError.self) { try await run.reached("firstScreen") }
        #expect(error?.code == .milestoneMissed)
        let report = try await run.report()
        #expect("\(report["comments"]!.outcome)" == "cancelled")
    }

    @Test func stepsMayNeedResultsOfEarlierStages() async throws {
        let schedule = Schedule {
            Stage("one") { Step("productID") { _ in 7 } }
            Stage("two") {
                Step("gallery", dependsOn: ["productID"]) { context in
                    try context.value(of: TaskHandle<Int>(id: "productID")) * 2
                }
            }
        }
        let report = try await schedule.run()
        #expect(report.isSuccess)
        #expect(report["gallery"]?.dependencies == ["productID"])
    }

    @Test func conditionalAndLoopedStages() async throws {
        let regions = ["eu", "us"]
        let includeAds = false
        let schedule = Schedule {
            for region in regions {
                Stage(region) { Step("stock-\(region)") { _ in } }
            }
            if includeAds {
                Stage("ads") { Step("ads") { _ in } }
            }
        }
        #expect(schedule.graph.ids == ["stock-eu", "stock-us"])
    }
}

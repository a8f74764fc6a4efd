import Conductor

// The seed's product-detail page as a staged schedule: the most important calls first,
// milestones between the stages. Latencies are simulated here; the full demo talks HTTP.
func call(_ name: String, _ milliseconds: Int) -> Step {
    Step(name) { _ in try await Task.sleep(for: .milliseconds(milliseconds)) }
}

let page = Schedule {
    Stage("first") { call("basicInfo", 120) }
    Stage("second") {
        call("saleInfo", 80)
        call("itemUniqueInfo", 60)
    }
    Milestone("firstScreen")
    Stage("third") {
        call("logistics", 90)
        call("freight", 70)
    }
    Milestone("secondScreen")
    Stage("fourth") {
        call("recommend", 150)
        call("comments", 110)
    }
}

let run = try page.start()
for await event in run.events {
    switch event {
    case .stageStarted, .milestoneReached, .taskSucceeded, .runFinished: print(event)
    default: break
    }
}
let report = await run.report()
print("critical path: \(report.criticalPath.joined(separator: " → ")), \(report.duration)")

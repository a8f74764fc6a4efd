import ConductorLaunch

// An app that uses only the launcher: it must compile neither the gate (and HTTPTypes) nor the
// saved reports and their renderers.
let launcher = Launcher()
try launcher.add(ClosureStartupTask("config", run: {}))
try await launcher.run()
print("launcher-only consumer: \(try await launcher.report())")

import Conductor

// Uses the library, so the build compiles and links what an app's would.
let graph = TaskGraph()
print("consumer built against \(type(of: graph))")

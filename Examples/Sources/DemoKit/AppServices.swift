import Conductor

/// The app's services, each created once, lazily, on the queue it lives on — the cache on the
/// storage queue, the API on the network queue, media on its own.
enum AppServices {
    static let storage = QueueExecutor(label: "storage")
    static let network = QueueExecutor(label: "network")
    static let media = QueueExecutor(label: "media")

    static func assemble(
        launch: LaunchState, savedCache: [String: GateResponse], options: DemoOptions, recorder: Recorder,
        telemetry: Telemetry
    ) -> Assembly {
        let assembly = Assembly()
        assembly.register(ResponseStore.self, on: storage) { _ in
            await recorder.measure("services", "ResponseStore", detail: "on \(storage.label)") {
                ResponseStore(executor: storage, entries: savedCache)
            }
        }
        assembly.register(ShopAPI.self, on: network) { resolver in
            try await recorder.measure("services", "ShopAPI", detail: "on \(network.label), \(launch.mirror)") {
                let cache = try await resolver.resolve(ResponseStore.self)
                return try ShopAPI(
                    authority: launch.authority, token: launch.token, cache: cache, options: options,
                    recorder: recorder, telemetry: telemetry)
            }
        }
        assembly.register(MediaLoader.self, on: media) { resolver in
            try await recorder.measure("services", "MediaLoader", detail: "on \(media.label)") {
                MediaLoader(
                    api: try await resolver.resolve(ShopAPI.self), recorder: recorder,
                    limit: options.scaled(.seconds(2)), telemetry: telemetry)
            }
        }
        return assembly
    }
}

#if os(macOS) || os(Linux)
    import Foundation
    import Testing

    /// The `conductor-report` executable's exit statuses, run as CI runs it: 0 passed, 1 a
    /// regression (or a new run that did not complete), 2 for every input it cannot use, with
    /// a sentence that names it.
    @Suite struct ExitStatusTests {
        /// The tool, built beside this test bundle by `swift build --build-tests`.
        static let tool: URL? = {
            let bundle =
                Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundleURL
                ?? URL(fileURLWithPath: CommandLine.arguments[0])
            let tool = bundle.deletingLastPathComponent().appendingPathComponent("conductor-report")
            return FileManager.default.isExecutableFile(atPath: tool.path) ? tool : nil
        }()

        private func run(_ arguments: String...) throws -> (status: Int32, output: String, error: String) {
            let tool = try #require(Self.tool, "no conductor-report beside the tests: build with --build-tests")
            let process = Process()
            process.executableURL = tool
            process.arguments = arguments
            let (output, error) = (Pipe(), Pipe())
            process.standardOutput = output
            process.standardError = error
            try process.run()
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            let complained = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: printed, as: UTF8.self),
                String(decoding: complained, as: UTF8.self)
            )
        }

        private let base = DiffTests.fixture("base-1.json")

        @Test func aBadPercentageIsAnUnusableInput() throws {
            let result = try run("diff", base, base, "--fail-over", "abc")
            #expect(result.status == 2)
            #expect(result.error.contains("'abc' is not a percentage such as 10%"))
            // The usage shown is diff's, not the whole tool's.
            #expect(result.error.contains("Usage: conductor-report diff"))
        }

        @Test func aDurationWithoutAUnitIsAnUnusableInput() throws {
            let result = try run("diff", base, base, "--min-change", "5")
            #expect(result.status == 2)
            #expect(result.error.contains("'5' is not a duration such as 5ms, 1.5s or 250us"))
        }

        @Test func oneReportIsAnUnusableInput() throws {
            let result = try run("diff", base)
            #expect(result.status == 2)
            #expect(result.error.contains("give exactly two reports, BASE NEW, or use --base and --new"))
        }

        @Test func anOptionTheToolDoesNotKnowIsAnUnusableInput() throws {
            #expect(try run("diff", base, base, "--fail-under", "10%").status == 2)
            #expect(try run("timeline", base, "--width", "wide").status == 2)
        }

        @Test(arguments: ["html", "trace"])
        func aPathThatCannotBeWrittenIsNamed(command: String) throws {
            let path = "/no/such/folder/out.html"
            let result = try run(command, base, "-o", path)
            #expect(result.status == 2)
            #expect(
                result.error
                    == "error: cannot write \(path): its folder does not exist, or it cannot be written there\n")
        }

        @Test func statusesOfAPassARegressionAndARunThatDidNotComplete() throws {
            #expect(try run("diff", base, base, "--fail-over", "10%").status == 0)
            #expect(try run("diff", base, DiffTests.fixture("slower-1.json"), "--fail-over", "10%").status == 1)
            // With or without a threshold, as the documentation says.
            #expect(try run("diff", base, DiffTests.fixture("cancelled.json")).status == 1)
            #expect(try run("diff", base, DiffTests.fixture("other-run.json")).status == 2)
            #expect(try run("--help").status == 0)
        }
    }
#endif

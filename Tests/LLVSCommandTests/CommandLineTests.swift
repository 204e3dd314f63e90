import Foundation
import LLVSSupport
import Testing

/// Runs the built `llvs` binary as a user would and checks its output and exit codes.
@Suite final class CommandLineTests {
    let directory: URL
    var store: String { directory.appendingPathComponent("store").path }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    struct Result {
        var status: Int32
        var output: Data
        var error: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    static let binary = BuiltProgram.url("llvs")

    @discardableResult
    func llvs(
        _ arguments: String..., input: Data? = nil, withStore: Bool = true, environment: [String: String] = [:]
    ) async throws -> Result {
        try await run(arguments + (withStore ? ["--store", store] : []), input: input, environment: environment)
    }

    /// The environment children start with: the test's own, less the developer's `LLVS_*` settings (a remote's
    /// password, a trace, a deadline), which would change what the commands do.
    static let cleanEnvironment = clean(ProcessInfo.processInfo.environment)
    static func clean(_ environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("LLVS_") }
    }

    /// Runs `llvs` with its configuration (remotes) in this test's own folder; `through` is a command that runs it
    /// (`setpriv … ` to run it as another user).
    func run(
        _ arguments: [String], input: Data? = nil, environment: [String: String] = [:], through wrapper: [String] = [],
        executable: URL = CommandLineTests.binary, in workingDirectory: URL? = nil
    ) async throws -> Result {
        let process = ChildProcess()
        if let first = wrapper.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(wrapper.dropFirst()) + [Self.binary.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.environment = Self.cleanEnvironment
            .merging(["XDG_CONFIG_HOME": directory.appendingPathComponent("config").path]) { _, new in new }
            .merging(environment) { _, new in new }
        process.currentDirectoryURL = workingDirectory ?? directory
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        // The child is waited for on a thread of its own, not one of Swift's few cooperative threads (which would
        // stall every other test meanwhile); both pipes are drained at once, so a long trace cannot deadlock it.
        return await withCheckedContinuation { continuation in
            Thread {
                nonisolated(unsafe) var error = Data()
                let drained = DispatchGroup()
                drained.enter()
                DispatchQueue.global().async {
                    error = err.fileHandleForReading.readDataToEndOfFile()
                    drained.leave()
                }
                if let input { inp.fileHandleForWriting.write(input) }
                try? inp.fileHandleForWriting.close()
                let output = out.fileHandleForReading.readDataToEndOfFile()
                drained.wait()
                process.waitUntilExit()
                continuation.resume(
                    returning: Result(
                        status: process.terminationStatus, output: output, error: String(decoding: error, as: UTF8.self)
                    ))
            }.start()
        }
    }

    @Test func childrenStartWithoutTheDevelopersLLVSSettings() {
        let developer = [
            "PATH": "/usr/bin", "LLVS_WEBDAV_PASSWORD": "secret", "LLVS_HTTP_TRACE": "1", "LLVS_DEADLINE": "1",
            "HOME": "/root",
        ]
        #expect(Self.clean(developer) == ["PATH": "/usr/bin", "HOME": "/root"])
    }

    /// A trace fills the error pipe long before the command ends; the harness drains both pipes at once, so this
    /// ends instead of hanging (the time limit turns a hang into a failure).
    @Test(.timeLimit(.minutes(5))) func aTracedCommandDoesNotHangTheHarness() async throws {
        let mock = try MockProcess(["webdav"])
        #expect(
            try await run([
                "remote", "add", "--all-stores", "dav", mock.url.replacingOccurrences(of: "http://", with: "webdav://"),
            ]).status == 0)
        let traced = try await run(
            ["conformance", "dav", "--listing-count", "200", "--large-file-mib", "1"],
            environment: ["LLVS_HTTP_TRACE": "1"])
        #expect(traced.status == 0)
        #expect(
            traced.error.utf8.count > 65_536,
            "the trace should be larger than a pipe's buffer: \(traced.error.utf8.count) bytes")
        withExtendedLifetime(mock) {}
    }

    @Test func aValueRoundTripsThroughPutAndGet() async throws {
        #expect(try await llvs("init").status == 0)
        let binary = Data((0..<256).map { UInt8($0) })
        let put = try await llvs("put", "blobs/all-bytes", "-", input: binary)
        #expect(put.status == 0)
        let version = put.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await llvs("get", "blobs/all-bytes").output == binary)
        let file = directory.appendingPathComponent("in.txt")
        try Data("second".utf8).write(to: file)
        #expect(try await llvs("put", "blobs/all-bytes", file.path).status == 0)
        #expect(try await llvs("get", "blobs/all-bytes").text == "second")
        #expect(try await llvs("get", "blobs/all-bytes", "--at", String(version.prefix(8))).output == binary)
    }

    /// Standard input longer than `put` holds in memory goes through a file in the store's temporary folder, which
    /// is gone afterwards; `get` gives it back whole. A folder is refused by name.
    @Test func aLongValueFromStandardInputRoundTrips() async throws {
        #expect(try await llvs("init").status == 0)
        let long = Data((0..<(5 << 20 + 123)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })
        let put = try await llvs("put", "long", "-", input: long)
        #expect(put.status == 0, "\(put.error)")
        #expect(try await llvs("get", "long").output == long)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: store + "/tmp")) ?? []
        #expect(leftovers.isEmpty, "the staged copy should be gone: \(leftovers)")
        let folder = try await llvs("put", "f", directory.path)
        #expect(folder.status == 2)
        #expect(folder.error.contains("is a folder"))
    }

    @Test func anSQLiteStoreRemembersItsStorage() async throws {
        #expect(try await llvs("init", "--storage", "sqlite").text.contains("sqlite storage"))
        try await llvs("put", "a", "-", input: Data("in sqlite".utf8))
        #expect(try await llvs("get", "a").text == "in sqlite")
        #expect(FileManager.default.fileExists(atPath: store + "/store.sqlite"))
        #expect(try await llvs("init", "--storage", "paper", withStore: false).status == 2)
    }

    /// A value past SQLite's limit on a blob is refused by its size, before it is read, with what to do instead; the
    /// store is unchanged. The file is sparse, so the test writes nothing of its 1.5 GB.
    @Test func anSQLiteStoreRefusesAValueTooLargeForARow() async throws {
        #expect(try await llvs("init", "--storage", "sqlite").status == 0)
        let huge = directory.appendingPathComponent("huge.bin")
        try Data().write(to: huge)
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 1_500_000_000)
        try handle.close()
        let put = try await llvs("put", "huge", huge.path)
        #expect(put.status == 1)
        #expect(put.error.contains("1500000000 bytes is more than SQLite storage keeps"), "\(put.error)")
        #expect(put.error.contains("--storage file"))
        #expect(try await llvs("log").text.isEmpty)
    }

    @Test func logHeadsDiffAndRemove() async throws {
        try await llvs("init")
        let v1 = try await llvs("put", "a", "-", input: Data("1".utf8)).text.trimmingCharacters(in: .newlines)
        try await llvs("put", "b", "-", input: Data("2".utf8))
        let v3 = try await llvs("rm", "a").text.trimmingCharacters(in: .newlines)
        let log = try await llvs("log", "--json")
        let entries = try JSONSerialization.jsonObject(with: log.output) as! [[String: Any]]
        #expect(entries.count == 3)
        #expect(entries[0]["id"] as? String == v3)
        #expect(entries[0]["current"] as? Bool == true)
        #expect(try await llvs("heads").text.contains(v3))
        #expect(try await llvs("diff", v1, v3).text == "- a\n+ b\n")
        #expect(try await llvs("get", "a").status == 3)
    }

    @Test func mergeTakesInAnotherBranch() async throws {
        try await llvs("init")
        let v1 = try await llvs("put", "a", "-", input: Data("1".utf8)).text.trimmingCharacters(in: .newlines)
        #expect(try await llvs("merge").text.contains("Already up to date"))
        try await llvs("put", "a", "-", input: Data("main".utf8))
        let side = try await llvs("put", "b", "-", "--on", v1, "--branch", "side", input: Data("side".utf8))
        #expect(side.status == 0)
        #expect(try await llvs("get", "b").status == 3)  // the current version did not move
        let heads = try JSONSerialization.jsonObject(with: try await llvs("heads", "--json").output) as! [[String: Any]]
        #expect(heads.count == 2)
        #expect(try await llvs("merge", "--branch", "other").text.contains("Already up to date"))
        #expect(try await llvs("merge", "--arbiter", "branch").text.hasPrefix("Merged into"))
        #expect(try await llvs("get", "a").text == "main")
        #expect(try await llvs("get", "b").text == "side")
        #expect(try await llvs("heads", "--json").text.components(separatedBy: "\"id\"").count == 2)
    }

    @Test func badArgumentsGiveClearErrorsAndDistinctCodes() async throws {
        let missingStore = try await llvs("get", "x")
        #expect(missingStore.status == 4)
        #expect(missingStore.error.contains("llvs init"))
        try await llvs("init")
        let again = try await llvs("init")
        #expect(again.status == 7, "a store already there has its own code, apart from 4 (no store): \(again.error)")
        let unknown = try await llvs("frobnicate")
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown command frobnicate"))
        #expect(try await llvs("put", "only-id").status == 2)
        #expect(try await llvs("log", "--limit", "many").error.contains("--limit"))
        #expect(try await llvs("get", "x", "--at", "nonexistent").status == 3)
        // A file that cannot be read is a failure, not "no such value" (exit 3 is for values, versions and the like).
        #expect(try await llvs("put", "x", directory.appendingPathComponent("missing").path).status == 1)
        #expect(try await llvs("merge", "--arbiter", "coin").status == 2)
        #expect(try await llvs("get", "x", "--bogus").error.contains("unknown option --bogus"))
    }

    /// Each option's value is checked by its declaration when the words are parsed, before the command runs or
    /// touches the store: a bad value is exit 2 with the option and what it takes, whichever command it belongs to.
    @Test func optionValuesAreCheckedByTheirDeclarations() async throws {
        try await llvs("init")
        let cases: [([String], String)] = [
            (["init", "--storage", "tape"], "--storage needs one of file, sqlite, not tape"),
            (["log", "--limit", "-1"], "--limit needs a whole number from 0 up, not -1"),
            (["backup", ".", "--checkpoint-every", "0"], "--checkpoint-every needs a number of MiB above 0"),
            (["backup", ".", "--name", ""], "--name is empty"),
            (["restore", "out", "--before", "yesterday"], "--before needs a date (2026-11-29), a date and time"),
            (
                ["remote", "add", "r", "file:///tmp/r", "--concurrency", "65"],
                "--concurrency needs a whole number from 1 to 64, not 65"
            ),
            (
                ["remote", "add", "r", "file:///tmp/r", "--base-path", "a/../b"],
                "--base-path needs a path on the remote"
            ),
            (["snapshot", "r", "--format", "tar"], "--format needs one of zip-v1, llvs-bundles-v1, not tar"),
            (["sync", "--arbiter", "coin"], "--arbiter needs one of change, branch, not coin"),
            (["conformance", "r", "--listing-count", "0"], "--listing-count needs a whole number from 1"),
            (["put", "a", "-", "--branch", ""], "--branch is empty"),
        ]
        for (words, message) in cases {
            let result = try await run(words)
            #expect(result.status == 2 && result.error.contains(message), "\(words): \(result.error)")
        }
        #expect(try await llvs("log").status == 0, "the store is untouched")
        let help = try await llvs("backup", "--help").text
        #expect(
            help.contains("--checkpoint-every MIB") && help.contains("--store DIR"),
            "help comes from the same declarations: \(help)")
    }

    /// `llvs-bench` and `llvs-mock` check their arguments as `llvs` does: an unknown option, a missing value or a
    /// bad number is an error with exit code 2 that names it, never a silent default.
    @Test func theOtherToolsRefuseBadArgumentsAsLLVSDoes() async throws {
        let folder = Self.binary.deletingLastPathComponent()
        func runTool(_ tool: String, _ arguments: [String]) async throws -> Result {
            try await run(arguments, executable: folder.appendingPathComponent(tool))
        }
        for (arguments, expected) in [
            (["compare", "--rows", "18"], "--rows needs comma-separated whole numbers from 1 to 17"),
            (["store", "--bogus", "1"], "unknown option --bogus"),
            (["sync", "--runs", "x"], "--runs needs a whole number"),
            (["http", "--requests"], "--requests needs a value"),
            (["compare", "--remotes", "dropbox"], "--remotes takes box, gdrive"),
            (["frobnicate"], "unknown command frobnicate"),
        ] {
            let result = try await runTool("llvs-bench", arguments)
            #expect(
                result.status == 2 && result.error.contains(expected), "\(arguments): \(result.status) \(result.error)")
        }
        let mock = try await runTool("llvs-mock", ["webdav", "--prot", "1"])
        #expect(mock.status == 2 && mock.error.contains("unknown option --prot"), "\(mock.error)")
        let port = try await runTool("llvs-mock", ["webdav", "--port", "70000"])
        #expect(port.status == 2 && port.error.contains("--port needs a number"), "\(port.error)")
    }

    @Test func everyCommandHasHelp() async throws {
        let overview = try await llvs("--help", withStore: false)
        #expect(overview.status == 0)
        for command in ["init", "put", "get", "rm", "log", "heads", "diff", "merge"] {
            #expect(overview.text.contains("  \(command) "))
            let help = try await llvs(command, "--help", withStore: false)
            #expect(help.status == 0)
            #expect(help.text.hasPrefix("usage: llvs \(command)"))
        }
    }

    @Test func aDamagedStoreGivesTheCorruptExitCode() async throws {
        try await llvs("init")
        try await llvs("put", "a", "-", input: Data("1".utf8))
        let versions = URL(fileURLWithPath: store).appendingPathComponent("versions")
        let shard = try FileManager.default.contentsOfDirectory(atPath: versions.path).first { !$0.hasPrefix(".") }!
        let file = try FileManager.default.contentsOfDirectory(atPath: versions.appendingPathComponent(shard).path)
            .first!
        let path = versions.appendingPathComponent(shard).appendingPathComponent(file)
        try Data("garbage".utf8).write(to: path)
        let result = try await llvs("log")
        #expect(result.status == 5)
        #expect(result.error.contains(path.path))
    }
}

/// The refresh helper (`llvs __refresh-token`, which outlives a killed command) answers an asker that is gone
/// without crashing: its answer then meets a closed pipe.
@Suite struct RefreshHelperTests {
    @Test func anAnswerToAnAskerThatIsGoneEndsTheHelperNormally() throws {
        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = ["__refresh-token"]
        process.environment = CommandLineTests.cleanEnvironment
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try output.fileHandleForReading.close()
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data("not a refresh request".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "the helper was stopped by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == 1)
    }
}

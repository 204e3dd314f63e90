import Foundation
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

    static let binary: URL = {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for folder in [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent(),
                       packageRoot.appendingPathComponent(".build/debug")] {
            let url = folder.appendingPathComponent("llvs")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return packageRoot.appendingPathComponent(".build/debug/llvs")
    }()

    @discardableResult
    func llvs(_ arguments: String..., input: Data? = nil, withStore: Bool = true, environment: [String: String] = [:]) throws -> Result {
        try run(arguments + (withStore ? ["--store", store] : []), input: input, environment: environment)
    }

    /// The environment children start with: the test's own, less the developer's `LLVS_*` settings (a remote's
    /// password, a trace, a deadline), which would change what the commands do.
    static let cleanEnvironment = clean(ProcessInfo.processInfo.environment)
    static func clean(_ environment: [String: String]) -> [String: String] { environment.filter { !$0.key.hasPrefix("LLVS_") } }

    /// Runs `llvs` with its configuration (remotes) in this test's own folder; `through` is a command that runs it
    /// (`setpriv … ` to run it as another user).
    func run(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:], through wrapper: [String] = []) throws -> Result {
        let process = Process()
        if let first = wrapper.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(wrapper.dropFirst()) + [Self.binary.path] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = arguments
        }
        process.environment = Self.cleanEnvironment
            .merging(["XDG_CONFIG_HOME": directory.appendingPathComponent("config").path]) { _, new in new }
            .merging(environment) { _, new in new }
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        // Both pipes are drained at once: reading one to its end first deadlocks once the other fills (a trace).
        let drained = DispatchGroup()
        nonisolated(unsafe) var error = Data()
        drained.enter()
        DispatchQueue.global().async {
            error = err.fileHandleForReading.readDataToEndOfFile()
            drained.leave()
        }
        if let input { inp.fileHandleForWriting.write(input) }
        try inp.fileHandleForWriting.close()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: output, error: String(decoding: error, as: UTF8.self))
    }

    @Test func childrenStartWithoutTheDevelopersLLVSSettings() {
        let developer = ["PATH": "/usr/bin", "LLVS_WEBDAV_PASSWORD": "secret", "LLVS_HTTP_TRACE": "1", "LLVS_DEADLINE": "1", "HOME": "/root"]
        #expect(Self.clean(developer) == ["PATH": "/usr/bin", "HOME": "/root"])
    }

    /// A trace fills the error pipe long before the command ends; the harness drains both pipes at once, so this
    /// ends instead of hanging (the time limit turns a hang into a failure).
    @Test(.timeLimit(.minutes(1))) func aTracedCommandDoesNotHangTheHarness() throws {
        let mock = try MockProcess(["webdav"])
        #expect(try run(["remote", "add", "dav", mock.url.replacingOccurrences(of: "http://", with: "webdav://")]).status == 0)
        let traced = try run(["conformance", "dav", "--listing-count", "200", "--large-file-mib", "1"], environment: ["LLVS_HTTP_TRACE": "1"])
        #expect(traced.status == 0)
        #expect(traced.error.utf8.count > 65_536, "the trace should be larger than a pipe's buffer: \(traced.error.utf8.count) bytes")
        withExtendedLifetime(mock) {}
    }

    @Test func aValueRoundTripsThroughPutAndGet() throws {
        #expect(try llvs("init").status == 0)
        let binary = Data((0..<256).map { UInt8($0) })
        let put = try llvs("put", "blobs/all-bytes", "-", input: binary)
        #expect(put.status == 0)
        let version = put.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try llvs("get", "blobs/all-bytes").output == binary)
        let file = directory.appendingPathComponent("in.txt")
        try Data("second".utf8).write(to: file)
        #expect(try llvs("put", "blobs/all-bytes", file.path).status == 0)
        #expect(try llvs("get", "blobs/all-bytes").text == "second")
        #expect(try llvs("get", "blobs/all-bytes", "--at", String(version.prefix(8))).output == binary)
    }

    @Test func anSQLiteStoreRemembersItsStorage() throws {
        #expect(try llvs("init", "--storage", "sqlite").text.contains("sqlite storage"))
        try llvs("put", "a", "-", input: Data("in sqlite".utf8))
        #expect(try llvs("get", "a").text == "in sqlite")
        #expect(FileManager.default.fileExists(atPath: store + "/store.sqlite"))
        #expect(try llvs("init", "--storage", "paper", withStore: false).status == 2)
    }

    @Test func logHeadsDiffAndRemove() throws {
        try llvs("init")
        let v1 = try llvs("put", "a", "-", input: Data("1".utf8)).text.trimmingCharacters(in: .newlines)
        try llvs("put", "b", "-", input: Data("2".utf8))
        let v3 = try llvs("rm", "a").text.trimmingCharacters(in: .newlines)
        let log = try llvs("log", "--json")
        let entries = try JSONSerialization.jsonObject(with: log.output) as! [[String: Any]]
        #expect(entries.count == 3)
        #expect(entries[0]["id"] as? String == v3)
        #expect(entries[0]["current"] as? Bool == true)
        #expect(try llvs("heads").text.contains(v3))
        #expect(try llvs("diff", v1, v3).text == "- a\n+ b\n")
        #expect(try llvs("get", "a").status == 3)
    }

    @Test func mergeTakesInAnotherBranch() throws {
        try llvs("init")
        let v1 = try llvs("put", "a", "-", input: Data("1".utf8)).text.trimmingCharacters(in: .newlines)
        #expect(try llvs("merge").text.contains("Already up to date"))
        try llvs("put", "a", "-", input: Data("main".utf8))
        let side = try llvs("put", "b", "-", "--on", v1, "--branch", "side", input: Data("side".utf8))
        #expect(side.status == 0)
        #expect(try llvs("get", "b").status == 3) // the current version did not move
        let heads = try JSONSerialization.jsonObject(with: try llvs("heads", "--json").output) as! [[String: Any]]
        #expect(heads.count == 2)
        #expect(try llvs("merge", "--branch", "other").text.contains("Already up to date"))
        #expect(try llvs("merge", "--arbiter", "branch").text.hasPrefix("Merged into"))
        #expect(try llvs("get", "a").text == "main")
        #expect(try llvs("get", "b").text == "side")
        #expect(try llvs("heads", "--json").text.components(separatedBy: "\"id\"").count == 2)
    }

    @Test func badArgumentsGiveClearErrorsAndDistinctCodes() throws {
        let missingStore = try llvs("get", "x")
        #expect(missingStore.status == 4)
        #expect(missingStore.error.contains("llvs init"))
        try llvs("init")
        #expect(try llvs("init").status == 4)
        let unknown = try llvs("frobnicate")
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown command frobnicate"))
        #expect(try llvs("put", "only-id").status == 2)
        #expect(try llvs("log", "--limit", "many").error.contains("--limit"))
        #expect(try llvs("get", "x", "--at", "nonexistent").status == 3)
        #expect(try llvs("put", "x", directory.appendingPathComponent("missing").path).status == 3)
        #expect(try llvs("merge", "--arbiter", "coin").status == 2)
        #expect(try llvs("get", "x", "--bogus").error.contains("unknown option --bogus"))
    }

    @Test func everyCommandHasHelp() throws {
        let overview = try llvs("--help", withStore: false)
        #expect(overview.status == 0)
        for command in ["init", "put", "get", "rm", "log", "heads", "diff", "merge"] {
            #expect(overview.text.contains("  \(command) "))
            let help = try llvs(command, "--help", withStore: false)
            #expect(help.status == 0)
            #expect(help.text.hasPrefix("usage: llvs \(command)"))
        }
    }

    @Test func aDamagedStoreGivesTheCorruptExitCode() throws {
        try llvs("init")
        try llvs("put", "a", "-", input: Data("1".utf8))
        let versions = URL(fileURLWithPath: store).appendingPathComponent("versions")
        let shard = try FileManager.default.contentsOfDirectory(atPath: versions.path).first { !$0.hasPrefix(".") }!
        let file = try FileManager.default.contentsOfDirectory(atPath: versions.appendingPathComponent(shard).path).first!
        let path = versions.appendingPathComponent(shard).appendingPathComponent(file)
        try Data("garbage".utf8).write(to: path)
        let result = try llvs("log")
        #expect(result.status == 5)
        #expect(result.error.contains(path.path))
    }
}

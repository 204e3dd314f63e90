import Foundation
import LLVSSupport
import Testing

/// Two devices that first use an encrypted remote at the same moment each make a key. Whichever key file the remote
/// keeps, every version both sent must stay readable by every device: 20 tries per kind of remote, the second push
/// starting 0–500 ms after the first. The kinds run one after another: each try derives several Argon2id keys, and
/// three kinds at once would hold both cores from the rest of the suite.
@Suite(.serialized) struct EncryptedFirstUseRaceTests {
    static let passphrase = ["LLVS_PASSPHRASE": "shared secret"]

    @Test(.timeLimit(.minutes(20)), arguments: ["file", "webdav", "gdrive"])
    func twoStoresStartingAnEncryptedRemoteTogetherLeaveEveryVersionReadable(kind: String) async throws {
        var unreadable: [String] = []
        for attempt in 0..<20 {
            let offset = Int.random(in: 0...500)
            let tests = try CommandLineTests()
            func llvs(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
                try await tests.run(arguments, input: input, environment: Self.passphrase)
            }
            let mock = try await tests.addRemote(
                kind, folder: "race", options: ["--encrypt"], environment: Self.passphrase)
            defer { withExtendedLifetime(mock) {} }
            for store in ["a", "b"] {
                #expect(try await llvs("init", "--store", tests.file(store)).status == 0)
                #expect(
                    try await llvs(
                        "put", "from-\(store)", "-", "--store", tests.file(store),
                        input: Data("written by \(store)".utf8)
                    ).status == 0)
            }
            let first = try Self.start(
                ["push", "home", "--store", tests.file("a")], in: tests, errors: tests.file("a.err"))
            // The offset is the try's input, not an order the test waits for: whichever push ends first, and however
            // the two overlap, every version must stay readable.
            try await Task.sleep(for: .milliseconds(offset))
            let second = try Self.start(
                ["push", "home", "--store", tests.file("b")], in: tests, errors: tests.file("b.err"))
            let statuses = [await first.ended(), await second.ended()]
            let errors = ["a.err", "b.err"].map { (try? String(contentsOfFile: tests.file($0), encoding: .utf8)) ?? "" }
            #expect(statuses == [0, 0], "try \(attempt), \(offset) ms: \(errors)")

            let cloned = try await llvs("clone", "home", tests.file("c"))
            var readable = cloned.status == 0
            for store in ["a", "b"] where readable {
                readable =
                    try await llvs("get", "from-\(store)", "--store", tests.file("c")).text == "written by \(store)"
            }
            // Both stores converge on both versions.
            for store in ["a", "b"] where readable {
                let synced = try await llvs("sync", "home", "--store", tests.file(store))
                let other = try await llvs("get", store == "a" ? "from-b" : "from-a", "--store", tests.file(store))
                readable = synced.status == 0 && other.status == 0
            }
            if !readable { unreadable.append("try \(attempt) at \(offset) ms: \(cloned.error)") }
        }
        #expect(unreadable.isEmpty, "\(kind): \(unreadable.count) of 20 tries left versions unreadable: \(unreadable)")
    }

    /// Starts `llvs` as the harness runs it, its standard error into a file, without waiting for it.
    static func start(_ arguments: [String], in tests: CommandLineTests, errors: String) throws -> ChildProcess {
        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = arguments
        process.currentDirectoryURL = tests.directory
        process.environment = CommandLineTests.cleanEnvironment.merging(["XDG_CONFIG_HOME": tests.file("config")]) {
            _, new in new
        }
        .merging(passphrase) { _, new in new }
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        return process
    }
}

import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP
import LLVSMocks
import Testing

/// litmus (Debian's WebDAV compliance suite) against each real server and the mock flavour that imitates it: the mock
/// must pass every test its original passes (Apache passes them all), and the counts are printed for the record.
let litmusMissing: String? =
    FileManager.default.isExecutableFile(atPath: "/usr/bin/litmus")
    ? realServersMissing
    : "litmus is not installed (apt-get install litmus); scripts/test installs it"

@Suite(.serialized, .enabled(if: litmusMissing == nil || CIEnvironment.requiresEveryTest, "\(litmusMissing ?? "")"))
struct WebDAVLitmusTests {
    /// Per test (`suite/N. name`): passed or not (skipped tests are left out); and litmus's own count, "P of N"
    /// passed, summed over its suites.
    static func run(
        _ url: URL, user: String?, password: String?
    ) async throws -> (results: [String: Bool], summary: String) {
        let output = try await runBlocking { () -> String in
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/litmus")
            process.arguments = ["-k", url.absoluteString] + [user, password].compactMap { $0 }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": FileManager.default.temporaryDirectory.path]
            // litmus writes debug.log and child.log where it runs: somewhere of its own, not the package.
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
                "llvs-litmus-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: scratch) }
            process.currentDirectoryURL = scratch
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        var results: [String: Bool] = [:]
        var suite = ""
        for line in output.split(separator: "\n") {
            if line.hasPrefix("-> running `"), let name = line.split(separator: "`").dropFirst().first {
                suite = String(name.prefix { $0 != "'" })
            }
            // "\r 3. copy_simple.......... \r 3. copy_simple.......... pass" (the name printed twice, then the result)
            let words = line.replacingOccurrences(of: "\r", with: " ").split(
                separator: " ", omittingEmptySubsequences: true)
            guard words.count >= 4, words[0].hasSuffix("."), Int(words[0].dropLast()) != nil else { continue }
            let name = words[0] + " " + words[1].prefix { $0 != "." }  // numbered: lock tests repeat names
            let verdict = words.last ?? ""
            if verdict == "pass" || line.contains("pass (with") {
                results["\(suite)/\(name)"] = true
            } else if line.contains("FAIL") {
                results["\(suite)/\(name)"] = false
            }
        }
        var passed = 0, run = 0
        for line in output.split(separator: "\n") where line.hasPrefix("<- summary for") {
            // "<- summary for `basic': of 16 tests run: 16 passed, 0 failed. 100.0%"
            let words = line.split(separator: " ")
            if let of = words.firstIndex(of: "of"), of + 1 < words.count, let n = Int(words[of + 1]),
                let p = words.firstIndex(where: { $0.hasPrefix("passed") }).flatMap({ Int(words[$0 - 1]) })
            {
                run += n
                passed += p
            }
        }
        return (results, "\(passed) of \(run)")
    }

    /// Nextcloud's flavour has no original here (Nextcloud itself needs PHP, a database and an install).
    @Test(arguments: [MockWebDAVServer.Flavor.apache, .nginx, .rclone])
    func theMockPassesWhatItsOriginalPasses(flavor: MockWebDAVServer.Flavor) async throws {
        let original: RealWebDAVServer =
            switch flavor {
            case .apache: try await RealWebDAVServer.apache()
            case .nginx: try await RealWebDAVServer.nginx()
            case .rclone: try await RealWebDAVServer.rclone()
            case .nextcloud: throw CloudFileSystemError.server(status: 0, message: "no original to run litmus against")
            }
        let (theirs, theirSummary) = try await Self.run(original.url, user: original.user, password: original.password)
        let mock = try MockWebDAVServer(flavor: flavor, user: "u", password: "p")
        defer { mock.stop() }
        let (ours, ourSummary) = try await Self.run(mock.url, user: "u", password: "p")
        func passed(_ results: [String: Bool], _ suite: String? = nil) -> Int {
            results.filter { $0.value && (suite == nil || $0.key.hasPrefix(suite! + "/")) }.count
        }
        let suites = ["basic", "copymove", "props", "locks", "http"]
        print(
            "litmus, \(flavor.rawValue): \(original.name) \(theirSummary) passed, mock \(ourSummary); per test, original \(passed(theirs)) passed of \(theirs.count) run ("
                + suites.map { "\($0) \(passed(theirs, $0))" }.joined(separator: ", ")
                + "); mock \(passed(ours)) of \(ours.count) ("
                + suites.map { "\($0) \(passed(ours, $0))" }.joined(separator: ", ") + ")")
        #expect(theirs.count > 30, "litmus ran too few tests against \(original.name): \(theirs.count)")
        for (test, pass) in theirs.sorted(by: { $0.key < $1.key }) where pass {
            #expect(ours[test] == true, "\(original.name) passes \(test); the \(flavor.rawValue) mock does not")
        }
    }
}

import Foundation
import LLVS
import LLVSSupport
import LLVSConformance
import LLVSEncryption
import LLVSHTTP
import LLVSMocks
import Testing

/// What every connector's tests share, once: a client whose retries do not wait, the conformance harness, and a
/// fault control over a mock's HTTP fault kit. Each connector test target supplies only its service's faults.

/// A client whose retries do not wait (the policy's attempts, 8 by default).
public func quickClient(attempts: Int = 8, faults: HTTPFaultInjector? = nil) -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configuration.retryPolicy = RetryPolicy(maximumAttempts: attempts, sleep: { _ in })
    // An injector of its own when none is given, idle until a fault control asks it for a fault the mock cannot make
    // (a connection cut mid-body).
    configuration.faults = faults ?? HTTPFaultInjector()
    configuration.waitRecord = HTTPWaitRecord()
    return HTTPClient(configuration: configuration)
}

/// Seeded bytes, so a failure can be repeated.
public func bytes(_ count: Int, seed: UInt64) -> Data { SeededGenerator.bytes(count, seed: seed) }

/// Every check of the conformance suite, in the order it runs them (docs/conformance.md).
public let expectedConformanceChecks = [
    "not-found", "folders", "files", "large-file", "large-overwrite", "ranges", "names",
    "case-only-names", "unicode-forms", "listing", "integrity", "failed-upload", "source-fails-part-way",
    "rate-limit", "dropped-connection", "answer-lost", "interrupted-upload", "expired-token",
    "revoked-token", "concurrency", "racing-uploads", "create-only", "layouts", "clean-up",
]

/// The checks that need faults injected, skipped (with their reason) by a run without a fault control.
public let checksNeedingFaults = ConformanceSuite.checksNeedingFaults

/// Runs the conformance suite and records every failure, and every skip not in `skippable`, as an issue.
public func expectConformance(
    _ fileSystem: any CloudFileSystem, options: ConformanceOptions, skippable: Set<String> = [],
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    let report = await ConformanceSuite.run(on: fileSystem, options: options)
    // Written out here, not taken from the suite, so a suite that lost checks (or ran none) fails every connector.
    #expect(
        report.results.map(\.id) == expectedConformanceChecks, "the checks that ran", sourceLocation: sourceLocation)
    for result in report.results {
        switch result.status {
        case .passed: break
        case .skipped:
            #expect(
                skippable.contains(result.id), "\(result.id) skipped: \(result.message ?? "")",
                sourceLocation: sourceLocation)
            #expect(
                !(result.message ?? "").isEmpty, "\(result.id) was skipped without a reason",
                sourceLocation: sourceLocation)
        case .failed: Issue.record("\(result.id) failed: \(result.message ?? "")", sourceLocation: sourceLocation)
        }
    }
}

/// Lets the conformance suite's failure checks make a mock misbehave as its service does: the status a rate limit
/// comes as (Drive's is a 403), and how the service expires or revokes a token, where it has tokens.
public struct MockFaultControl: FaultControl {
    public var faults: MockFaults
    public var rateLimitStatus: Int
    public var expireTokens: (@Sendable () -> Void)?
    public var revokeTokens: (@Sendable () -> Void)?
    /// The connector's client's record of its waits (`HTTPClientConfiguration.waitRecord`).
    public var clientWaits: HTTPWaitRecord?
    /// The connector's client's fault injector, for a cut the mock cannot make (mid-body, on the client's side).
    public var clientFaults: HTTPFaultInjector?

    public init(
        faults: MockFaults, rateLimitStatus: Int = 429, expireTokens: (@Sendable () -> Void)? = nil,
        revokeTokens: (@Sendable () -> Void)? = nil, clientWaits: HTTPWaitRecord? = nil, client: HTTPClient? = nil
    ) {
        self.faults = faults
        self.clientWaits = clientWaits ?? client?.configuration.waitRecord
        clientFaults = client?.configuration.faults
        self.rateLimitStatus = rateLimitStatus
        self.expireTokens = expireTokens
        self.revokeTokens = revokeTokens
    }

    public var supportedFaults: Set<InjectedFault> {
        var supported: Set<InjectedFault> = [.rateLimited, .serviceUnavailable, .droppedConnection, .revokedToken]
        if expireTokens != nil { supported.insert(.expiredToken) }
        if clientFaults != nil { supported.insert(.droppedMidUpload) }
        return supported
    }

    public func injectOnce(_ fault: InjectedFault) async {
        switch fault {
        case .rateLimited: faults.injectNext(.status(rateLimitStatus, retryAfter: 1))
        case .serviceUnavailable: faults.injectNext(.status(503, retryAfter: 1))
        case .droppedConnection: faults.injectNext(.dropBeforeAnswer)
        case .droppedMidUpload: clientFaults?.injectOnce(.droppedMidBody)
        case .expiredToken: expireTokens?()
        case .revokedToken:
            // Without tokens of its own (WebDAV), a service refuses the credentials with a 401.
            if let revokeTokens { revokeTokens() } else { faults.injectNext(.status(401)) }
        }
    }

    /// A lost answer aimed at the request that acts: any method but those that only read.
    public func injectOnChange(_ fault: InjectedFault) async {
        guard fault == .droppedConnection else { return await injectOnce(fault) }
        faults.inject(.dropBeforeAnswer) { !HTTPFaultInjector.readingMethods.contains($0.method.uppercased()) }
    }

    public var pendingFaults: Int? { get async { faults.pendingCount + (clientFaults?.pendingCount ?? 0) } }
}

/// What a child process printed and how it ended.
public struct ProcessOutcome: Sendable {
    public var status: Int32
    public var output: String
    public var errors: String
}

/// The environment a test's child program starts from: this process's, without the developer's `LLVS_*` settings
/// (a store, a deadline, a trace, an account's client), which would make a run depend on who runs it.
public var childEnvironment: [String: String] {
    ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("LLVS_") }
}

/// Runs a program to its end on a thread of its own, draining its output and errors at once: waiting for a child
/// on one of Swift's few cooperative threads would stall every other test of the process meanwhile.
public func runProgram(_ executable: URL, _ arguments: [String]) async throws -> ProcessOutcome {
    let process = ChildProcess()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = childEnvironment
    let output = Pipe(), errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    return await withCheckedContinuation { continuation in
        let thread = Thread {
            nonisolated(unsafe) var errorData = Data()
            let drained = DispatchGroup()
            drained.enter()
            DispatchQueue.global().async {
                errorData = errors.fileHandleForReading.readDataToEndOfFile()
                drained.leave()
            }
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            drained.wait()
            process.waitUntilExit()
            continuation.resume(
                returning: ProcessOutcome(
                    status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                    errors: String(decoding: errorData, as: UTF8.self)))
        }
        thread.start()
    }
}

/// The services' own client libraries, installed into `.build/clients-venv` by scripts/install-client-libraries
/// (which scripts/test runs), and the scripts in Tests/Clients that drive a mock with them.
public enum ClientLibraries {
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    public static let python = packageRoot.appendingPathComponent(".build/clients-venv/bin/python")

    /// Whether the venv's Python can import `modules` (comma-separated, as in an import statement).
    public static func installed(_ modules: String) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: python.path) else { return false }
        let check = ChildProcess()
        check.executableURL = python
        check.arguments = ["-c", "import \(modules)"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        guard (try? check.run()) != nil else { return false }
        check.waitUntilExit()
        return check.terminationStatus == 0
    }

    /// Runs `Tests/Clients/SCRIPT` with the venv's Python.
    public static func run(_ script: String, _ arguments: [String]) async throws -> ProcessOutcome {
        try await runProgram(
            python,
            [packageRoot.appendingPathComponent("Tests/Clients").appendingPathComponent(script).path] + arguments)
    }

    /// Meets every named fault of `catalogue` through the service's own library (`named_faults_client_library.py`,
    /// which injects each through the mock's control path), and records an issue unless every step held and every
    /// fault of the catalogue was met at least once: a fault added to a mock and not to the script fails here.
    public static func expectEveryNamedFault(
        _ arguments: [String], faults: MockFaults, catalogue: [MockNamedFault],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let outcome = try await run("named_faults_client_library.py", arguments)
        let failure = "\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))"
        #expect(
            outcome.status == 0, "the library did not meet the faults as the service's own:\n\(failure)",
            sourceLocation: sourceLocation)
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", sourceLocation: sourceLocation)
        for fault in catalogue {
            #expect(faults.firedCount(fault.name) >= 1, "\(fault.name) was not met", sourceLocation: sourceLocation)
        }
    }

    /// Refreshes a token issued by `oauth` through the service's own library (`oauth_refresh_libraries.py SERVICE`),
    /// and records an issue unless every step held and the library refreshed at least `refreshes` times.
    public static func expectRefreshesThroughTheLibrary(
        _ service: String, endpoint: URL, oauth: MockOAuthServer, refreshes: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let token = oauth.issueToken()
        let outcome = try await run(
            "oauth_refresh_libraries.py",
            [
                service, endpoint.absoluteString, oauth.settings.clientId,
                oauth.settings.clientSecret ?? "", token.refreshToken ?? "",
            ])
        #expect(
            outcome.status == 0,
            "the library failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))",
            sourceLocation: sourceLocation)
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok", sourceLocation: sourceLocation)
        #expect(
            oauth.refreshCount >= refreshes, "the library refreshed through the mock", sourceLocation: sourceLocation)
    }
}

/// Runs the conformance suite through the encryption layer over `base`, in a folder of its own that is removed
/// afterwards (with its key file), so every check holds for a sealed remote too.
public func expectConformanceThroughEncryption(
    _ base: any CloudFileSystem, options: ConformanceOptions, skippable: Set<String> = [],
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let folder = "encrypted-\(UUID().uuidString.prefix(8).lowercased())"
    let encrypted = RemoteEncryption.encrypting(base, folder: folder, passphrase: "conformance passphrase")
    var options = options
    options.parentFolder = folder
    await expectConformance(encrypted, options: options, skippable: skippable, sourceLocation: sourceLocation)
    #expect(
        try await base.exists(CloudPath.join(folder, RemoteKeyFile.name)),
        "the key file should be in the encrypted folder", sourceLocation: sourceLocation)
    try await base.removeFolder(folder)
}

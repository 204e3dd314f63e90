import Foundation
import LLVS
import LLVSHTTP
import LLVSSupport
import Synchronization

/// A fault a test asks for.
public enum InjectedFault: String, Sendable, CaseIterable, Codable {
    /// A 429 with a Retry-After of one second.
    case rateLimited
    /// A 503.
    case serviceUnavailable
    /// The connection drops before the answer (the operation may or may not have happened).
    case droppedConnection
    /// The connection drops half way through an upload's body: the server got part of the file.
    case droppedMidUpload
    /// The access token has expired (a refresh cures it).
    case expiredToken
    /// The credentials are refused even after a refresh.
    case revokedToken
}

/// How a conformance run can make the remote misbehave on purpose. Mocks implement it at the HTTP level; the
/// fault-injecting wrapper implements it for any file system. Without one, the failure checks are skipped.
public protocol FaultControl: Sendable {
    /// The faults this control can inject.
    var supportedFaults: Set<InjectedFault> { get }
    /// Makes the next request (or operation) fail with `fault`.
    func injectOnce(_ fault: InjectedFault) async
    /// Makes the next request that changes something on the remote fail with `fault`: the DELETE of a removal, not
    /// the look-up a connector makes before it. A control that sees operations rather than requests (a local
    /// folder's) has nothing to skip.
    func injectOnChange(_ fault: InjectedFault) async
    /// Faults injected that nothing has met yet, where the control can tell (nil where it cannot): a check whose fault
    /// was never met proved nothing.
    var pendingFaults: Int? { get async }
    /// Why a fault it does not support does not apply to this remote, for the skipped check's note.
    func unsupportedReason(_ fault: InjectedFault) -> String
    /// Where the client's waits are recorded (`HTTPWaitRecord`), so the rate-limit check can show the client waited
    /// as long as it was asked; nil where there is no HTTP client to ask (a local folder).
    var clientWaits: HTTPWaitRecord? { get }
    /// The wait an injected refusal asks for (its Retry-After); nil for one that names none (pCloud's result 4000),
    /// after which any wait the client decides on is right.
    func requestedWait(_ fault: InjectedFault) -> Duration?
}

extension FaultControl {
    public func injectOnChange(_ fault: InjectedFault) async { await injectOnce(fault) }
    public var pendingFaults: Int? { get async { nil } }
    public func unsupportedReason(_ fault: InjectedFault) -> String { "this remote cannot inject \(fault.rawValue)" }
    public var clientWaits: HTTPWaitRecord? { nil }
    /// The injectors here answer a rate limit and an outage with Retry-After: 1.
    public func requestedWait(_ fault: InjectedFault) -> Duration? {
        [.rateLimited, .serviceUnavailable].contains(fault) ? .seconds(1) : nil
    }
}

/// Wraps any file system and makes some of its operations fail: at random (a seeded rate, so a run can be
/// repeated), on demand through `FaultControl`, or by a rule (the n-th upload, a path). It also counts operations,
/// which benchmarks and tests use to see what a sync costs.
public final class FaultInjectingFileSystem: CloudFileSystem, FaultControl {
    public enum Operation: String, Sendable, CaseIterable {
        case exists, list, metadata, upload, download, read, makeFolder, removeFile, removeFolder
    }

    /// A rule: given the operation, its number (from 1, per kind) and path, the failure to raise, if any.
    public typealias Rule = @Sendable (Operation, Int, String) -> CloudFileSystemError?

    public let base: any CloudFileSystem
    private let state: Mutex<State>

    struct State {
        var generator: SeededGenerator
        var failureRate: Double
        var pending: [InjectedFault] = []
        var counts: [Operation: Int] = [:]
        var rule: Rule?
    }

    /// `failureRate` is the share of operations that fail with a random transient fault (503, dropped connection
    /// before or after the operation ran, 429 with a short delay).
    public init(_ base: any CloudFileSystem, failureRate: Double = 0, seed: UInt64 = 1, rule: Rule? = nil) {
        self.base = base
        self.state = Mutex(State(generator: SeededGenerator(seed: seed), failureRate: failureRate, rule: rule))
    }

    public var capabilities: CloudCapabilities { base.capabilities }

    public var supportedFaults: Set<InjectedFault> {
        [.rateLimited, .serviceUnavailable, .droppedConnection, .droppedMidUpload, .revokedToken]
    }

    public func injectOnce(_ fault: InjectedFault) async {
        state.withLock { $0.pending.append(fault) }
    }

    public var pendingFaults: Int? { get async { state.withLock { $0.pending.count } } }

    public func setRule(_ rule: Rule?) { state.withLock { $0.rule = rule } }
    public func setFailureRate(_ rate: Double) { state.withLock { $0.failureRate = rate } }

    /// Operations performed (or attempted) so far, by kind.
    public var counts: [Operation: Int] { state.withLock { $0.counts } }
    public var totalCount: Int { counts.values.reduce(0, +) }
    public func resetCounts() { state.withLock { $0.counts = [:] } }

    private enum Timing { case before, after }

    /// Decides this operation's fate: nil to run normally, or an error to raise before or after running it.
    private func fault(for operation: Operation, path: String) -> (CloudFileSystemError, Timing)? {
        state.withLock { state in
            state.counts[operation, default: 0] += 1
            if let rule = state.rule, let error = rule(operation, state.counts[operation]!, path) {
                return (error, .before)
            }
            if !state.pending.isEmpty {
                switch state.pending.removeFirst() {
                case .rateLimited: return (.rateLimited(retryAfter: .seconds(1)), .before)
                case .serviceUnavailable: return (.transient("503 Service Unavailable (injected)"), .before)
                case .droppedConnection: return (.transient("connection dropped (injected)"), .after)
                case .droppedMidUpload: return (.transient("connection dropped during the upload (injected)"), .before)
                case .expiredToken, .revokedToken: return (.unauthorized("the token was refused (injected)"), .before)
                }
            }
            guard state.failureRate > 0, Double.random(in: 0..<1, using: &state.generator) < state.failureRate else {
                return nil
            }
            switch Int.random(in: 0..<4, using: &state.generator) {
            case 0: return (.transient("503 Service Unavailable (injected)"), .before)
            case 1: return (.transient("connection dropped before the answer (injected)"), .after)
            case 2: return (.transient("connection reset (injected)"), .before)
            default: return (.rateLimited(retryAfter: .milliseconds(10)), .before)
            }
        }
    }

    private func run<T>(_ operation: Operation, _ path: String, _ body: () async throws -> T) async throws -> T {
        guard let (error, timing) = fault(for: operation, path: path) else { return try await body() }
        if timing == .after { _ = try? await body() }
        throw error
    }

    public func exists(_ path: String) async throws -> Bool {
        try await run(.exists, path) { try await base.exists(path) }
    }
    public func list(_ folder: String) async throws -> [CloudItem] {
        try await run(.list, folder) { try await base.list(folder) }
    }
    /// Counted as the listing it replaces, so what a sync costs reads the same whichever the caller asks for.
    public func listNames(_ folder: String) async throws -> [String] {
        try await run(.list, folder) { try await base.listNames(folder) }
    }
    public func metadata(_ path: String) async throws -> CloudItem {
        try await run(.metadata, path) { try await base.metadata(path) }
    }
    public func stager(for path: String) async throws -> FileStager { try await base.stager(for: path) }
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await run(.upload, path) { try await base.upload(source, to: path, mode: mode) }
    }
    /// A whole file counts as a download, a part of one as a read.
    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await run(range == nil ? .download : .read, path) { try await base.read(path, range: range) }
    }
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await run(.download, path) { try await base.download(path, to: destination) }
    }
    public func makeFolder(_ path: String) async throws {
        try await run(.makeFolder, path) { try await base.makeFolder(path) }
    }
    public func removeFile(_ path: String) async throws {
        try await run(.removeFile, path) { try await base.removeFile(path) }
    }
    public func removeFolder(_ path: String) async throws {
        try await run(.removeFolder, path) { try await base.removeFolder(path) }
    }
}

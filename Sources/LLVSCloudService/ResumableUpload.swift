import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP

/// Where a resumable upload stands, as the service says.
public enum ResumableProgress<Result: Sendable>: Sendable {
    /// The file is stored; the service's description of it.
    case done(Result)
    /// The service holds bytes `0 ..< n` (Drive's `Range`, OneDrive's `nextExpectedRanges`, Box's parts, pCloud's
    /// `upload_info` size).
    case received(Int64)
    /// The session is gone (404/410, expired): start a new one.
    case expired
}

extension ServiceClient {
    /// What an upload session's failed answer means: `expired` when the classifier says the session is gone
    /// (`notFound`), so a new one is opened; otherwise the failure, thrown. For the answers outside a session
    /// protocol's own states (Drive's 308, Graph's 202, Box's 202, 412 and 416).
    public func sessionFailure<Item>(_ response: HTTPResponse, path: String) throws -> ResumableProgress<Item> {
        let failure = classifier.failure(response, path: path)
        if case .notFound = failure { return .expired }
        throw failure
    }
}

/// A service's resumable upload, in the few steps every service has: open a session, send a piece at an offset,
/// ask what the session holds, finish (Box's commit, pCloud's save), abandon (Box's abort). Requests made here are
/// sent once each (`maximumAttempts = 1`): `ResumableUploader` is their retry point.
public protocol ResumableUploadProtocol: Sendable {
    associatedtype Session: Sendable
    associatedtype Result: Sendable
    /// Opens a new session for `size` bytes.
    func open(size: Int64) async throws -> Session
    /// Sends bytes `offset ..< offset + length` of `total`; `piece` is that part of the source.
    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: Session
    ) async throws -> ResumableProgress<Result>
    /// What the session holds now; asked after a failure.
    func status(of session: Session, total: Int64) async throws -> ResumableProgress<Result>
    /// Called once the session holds every byte and no piece's answer finished the file.
    func finish(_ session: Session, total: Int64) async throws -> ResumableProgress<Result>
    /// Called when the upload gives up on a session (failed for good, or to start a new one).
    func abandon(_ session: Session) async
    /// The size every piece but the last must have, where the session dictates it (Box's `part_size`); nil for the
    /// uploader's own chunk size.
    func pieceSize(of session: Session) -> Int64?
}

extension ResumableUploadProtocol {
    public func finish(_ session: Session, total: Int64) async throws -> ResumableProgress<Result> {
        try await status(of: session, total: total)
    }
    public func abandon(_ session: Session) async {}
    public func pieceSize(of session: Session) -> Int64? { nil }
}

/// The one resumable upload engine: pieces of `chunkSize` (a multiple of the service's granularity) are sent in
/// order; after a failure the session is asked what it holds and the upload carries on from there, so bytes the
/// service acknowledged are never sent again; a session the service forgot starts over, a few times at most.
public struct ResumableUploader: Sendable {
    /// Bytes sent per request, a multiple of the service's granularity.
    public var chunkSize: Int64
    /// How often and how long to retry a piece before the session is asked what it holds.
    public var policy: RetryPolicy
    /// How many sessions one upload may open, when the service forgets one.
    public var maximumSessions = 3

    /// `chunkSize` is rounded down to a multiple of `granularity` (at least one).
    public init(chunkSize: Int64, granularity: Int64 = 1, policy: RetryPolicy) {
        let granularity = max(1, granularity)
        self.chunkSize = max(granularity, chunkSize / granularity * granularity)
        self.policy = policy
    }

    /// Sends `source` through sessions of `service`, resuming each after a failure from what it holds.
    /// - Returns: what the service said it stored.
    /// - Throws: the last failure when every session and retry is spent; `localFile` when the source cannot be read.
    public func upload<P: ResumableUploadProtocol>(
        _ source: UploadSource, with service: P, path: String
    ) async throws -> P.Result {
        let total = source.size
        for _ in 0..<maximumSessions {
            let session = try await service.open(size: total)
            do {
                if let result = try await send(source, total: total, to: session, with: service, path: path) {
                    return result
                }
            } catch {
                await service.abandon(session)
                throw error
            }
            await service.abandon(session)
        }
        throw CloudFileSystemError.transient("the upload sessions for \(path) keep expiring")
    }

    /// Sends everything into one session; nil when the session expired.
    private func send<P: ResumableUploadProtocol>(
        _ source: UploadSource, total: Int64, to session: P.Session,
        with service: P, path: String
    ) async throws -> P.Result? {
        var offset: Int64 = 0
        var failures = 0
        var sentEmpty = false
        let chunkSize = service.pieceSize(of: session).map { max(1, $0) } ?? chunkSize
        while true {
            var progress: ResumableProgress<P.Result>
            do {
                if offset < total || (total == 0 && !sentEmpty) {
                    let length = min(chunkSize, total - offset)
                    sentEmpty = true
                    progress = try await service.send(source, offset: offset, length: length, total: total, to: session)
                    if case .received(let held) = progress, held == offset, length > 0 {
                        // A session that took nothing (Graph's 416 for a range it did not expect) is asked again like
                        // any failure: a refusal now and then is waited out, one that never ends is not.
                        throw CloudFileSystemError.transient(
                            "the upload session for \(path) accepted none of the bytes at \(offset)")
                    }
                } else {
                    progress = try await service.finish(session, total: total)
                }
            } catch let error as CloudFileSystemError where error.isRetryable {
                progress = try await recover(
                    from: error, failures: &failures, session: session, total: total, service: service)
            }
            switch progress {
            case .done(let result):
                return result
            case .received(let held):
                guard held >= 0, held <= total else {
                    throw CloudFileSystemError.server(
                        status: 0, message: "the upload session for \(path) says it holds \(held) of \(total) bytes")
                }
                if held > offset { failures = 0 }
                offset = held
            case .expired:
                return nil
            }
        }
    }

    /// After a failure: wait, then ask the session what it holds (asking again while that fails too).
    private func recover<P: ResumableUploadProtocol>(
        from error: CloudFileSystemError, failures: inout Int, session: P.Session,
        total: Int64, service: P
    ) async throws -> ResumableProgress<P.Result> {
        var error = error
        while true {
            failures += 1
            guard failures < policy.maximumAttempts else { throw error }
            let retryAfter: Duration? = if case .rateLimited(let after) = error { after } else { nil }
            try await policy.sleep(policy.delay(beforeRetry: failures, retryAfter: retryAfter))
            do {
                return try await service.status(of: session, total: total)
            } catch let next as CloudFileSystemError where next.isRetryable {
                error = next
            }
        }
    }
}

import Foundation
import LLVS
import LLVSHTTP

/// Drive's resumable upload: a session is opened with the file's metadata and length, then the contents go up in
/// chunks that are multiples of 256 KiB. Each intermediate chunk is answered 308 with the `Range` Drive holds;
/// after a failure the session is asked what it has (`Content-Range: bytes */total`) and the upload carries on
/// from there, so acknowledged bytes are never sent twice. A session Drive forgot (404) starts over.
extension GoogleDriveFileSystem {
    func resumableUpload(_ source: UploadSource, method: String, target: URL, metadata: [String: Any], path: String) async throws -> DriveFile {
        let policy = http.configuration.retryPolicy
        var restarts = 0
        while true {
            let session = try await openSession(source, method: method, target: target, metadata: metadata, path: path)
            var offset: Int64 = 0
            var failures = 0
            sending: while true {
                let outcome: SessionAnswer
                do {
                    let length = min(Int64(configuration.chunkSize), source.size - offset)
                    var request = HTTPRequest(method: "PUT", url: session, body: source.body(offset: offset, length: length), isSafeToRepeat: false)
                    request.headers["Content-Range"] = "bytes \(offset)-\(offset + length - 1)/\(source.size)"
                    outcome = try Self.sessionAnswer(try await send(request), path: path)
                } catch let error as CloudFileSystemError {
                    guard Self.isWorthResuming(error) else { throw error }
                    outcome = .failed(error)
                }
                switch outcome {
                case .done(let file):
                    return file
                case .received(let held):
                    guard held > offset || held == source.size else {
                        throw CloudFileSystemError.server(status: 308, message: "Google Drive's upload session for \(path) accepted no bytes")
                    }
                    offset = held
                    failures = 0
                case .expired:
                    break sending
                case .failed(let error):
                    failures += 1
                    guard failures < policy.maximumAttempts else { throw error }
                    try await policy.sleep(policy.delay(beforeRetry: failures, retryAfter: nil))
                    switch try await status(of: session, total: source.size, path: path) {
                    case .done(let file): return file
                    case .received(let held): offset = held
                    case .expired: break sending
                    case .failed(let error): throw error
                    }
                }
            }
            restarts += 1
            guard restarts < 3 else { throw CloudFileSystemError.transient("Google Drive's upload sessions for \(path) keep expiring") }
        }
    }

    enum SessionAnswer {
        case done(DriveFile)
        /// Drive holds bytes 0 up to (not including) this offset.
        case received(Int64)
        case expired
        case failed(CloudFileSystemError)
    }

    private func openSession(_ source: UploadSource, method: String, target: URL, metadata: [String: Any], path: String) async throws -> URL {
        var components = URLComponents(url: target, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "uploadType=resumable&fields=" + FormEncoding.escape(DriveFile.fields)
        // Opening a session twice only leaves an unused session behind, so it may be repeated.
        var request = Self.jsonRequest(method, components.url!, metadata, safeToRepeat: true)
        request.headers["X-Upload-Content-Type"] = "application/octet-stream"
        request.headers["X-Upload-Content-Length"] = String(source.size)
        let response = try await send(request)
        guard response.isSuccess else { throw Self.failure(response, path) }
        guard let location = response.headers["Location"], let session = URL(string: location, relativeTo: target)?.absoluteURL else {
            throw CloudFileSystemError.server(status: response.status, message: "Google Drive opened no upload session for \(path) (no Location)")
        }
        return session
    }

    /// Asks a session how much it holds; repeated safely, since it changes nothing.
    private func status(of session: URL, total: Int64, path: String) async throws -> SessionAnswer {
        var request = HTTPRequest(method: "PUT", url: session, isSafeToRepeat: true)
        request.headers["Content-Range"] = "bytes */\(total)"
        do {
            return try Self.sessionAnswer(try await send(request), path: path)
        } catch let error as CloudFileSystemError where Self.isWorthResuming(error) {
            return .failed(error)
        }
    }

    static func sessionAnswer(_ response: HTTPResponse, path: String) throws -> SessionAnswer {
        switch response.status {
        case 200, 201:
            do { return .done(try JSONDecoder().decode(DriveFile.self, from: response.body)) } catch {
                throw CloudFileSystemError.server(status: response.status, message: "Google Drive's answer to the upload of \(path) is not a file: \(error)")
            }
        case 308:
            guard let range = response.headers["Range"] else { return .received(0) }
            guard range.hasPrefix("bytes=0-"), let last = Int64(range.dropFirst("bytes=0-".count)) else {
                throw CloudFileSystemError.server(status: 308, message: "Google Drive's upload session for \(path) answered the range \(range.prefix(80))")
            }
            return .received(last + 1)
        case 404, 410:
            return .expired
        default:
            let error = failure(response, path)
            guard isWorthResuming(error) else { throw error }
            return .failed(error)
        }
    }

    static func isWorthResuming(_ error: CloudFileSystemError) -> Bool {
        switch error {
        case .transient, .rateLimited: true
        default: false
        }
    }
}

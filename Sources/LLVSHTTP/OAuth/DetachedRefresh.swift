import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// A token refresh carried out by a helper process of its own session, so that it outlives the process that asked
/// for it. Services that rotate refresh tokens (Box's work once; Microsoft's are replaced at every refresh) answer a
/// refresh with the only copy of the new token: if the process that sent the request dies before the token is on
/// disk (kill -9, Ctrl-C, a crash), the account is locked out. The helper sends the request, writes the token file
/// durably under the file's lock and only then reports back; killing the asking process at any moment leaves it to
/// finish. Its own session keeps it out of the terminal's process group, so Ctrl-C does not reach it.
///
/// The helper is a program given by the application (`llvs` runs itself with a hidden command); it calls
/// `DetachedRefresh.serve()`, which reads a request on standard input and answers on standard output.
public struct DetachedRefresh: Sendable {
    /// The helper program and the arguments that make it serve one refresh.
    public var executable: String
    public var arguments: [String]

    public init(executable: String, arguments: [String]) {
        self.executable = executable
        self.arguments = arguments
    }

    /// What the helper needs: the token file, the token endpoint and the client, and the access token the asking
    /// process found stale (a token on disk that differs from it was refreshed already).
    struct Request: Codable {
        var tokenFile: String
        var tokenURL: URL
        var clientId: String
        var clientSecret: String?
        var scopes: [String]
        var basicClientAuthentication: Bool
        var rejected: String
        var refreshMargin: TimeInterval
        var reauthorizeCommand: String
    }

    /// The helper's answer: nothing for a token on disk, or the error the refresh met.
    struct Outcome: Codable {
        enum Failure: String, Codable {
            case reauthorizationRequired, notAuthorized, tokenEndpoint, tokenFile, transport, other
        }
        var failure: Failure?
        var status: Int?
        var code: String?
        var message: String?

        init(_ error: (any Error)?) {
            guard let error else { return }
            switch error {
            case OAuthError.reauthorizationRequired(_, let reason):
                (failure, message) = (.reauthorizationRequired, reason)
            case OAuthError.notAuthorized: failure = .notAuthorized
            case OAuthError.tokenEndpoint(let status, let code, let description):
                (failure, self.status, self.code, message) = (.tokenEndpoint, status, code, description)
            case OAuthError.tokenFile(_, let text): (failure, message) = (.tokenFile, text)
            case HTTPError.transport(let curlCode, let text, _):
                (failure, status, message) = (.transport, Int(curlCode), text)
            default: (failure, message) = (.other, "\(error)")
            }
        }

        /// The error the asking process throws, in its own words.
        func error(_ request: Request) -> (any Error)? {
            switch failure {
            case nil: nil
            case .reauthorizationRequired:
                OAuthError.reauthorizationRequired(command: request.reauthorizeCommand, reason: message ?? "")
            case .notAuthorized:
                OAuthError.notAuthorized(command: request.reauthorizeCommand, tokenFile: request.tokenFile)
            case .tokenEndpoint:
                OAuthError.tokenEndpoint(status: status ?? 0, error: code ?? "", description: message ?? "")
            case .tokenFile: OAuthError.tokenFile(path: request.tokenFile, message: message ?? "")
            case .transport:
                HTTPError.transport(
                    code: Int32(status ?? 0), message: message ?? "", url: request.tokenURL.absoluteString)
            case .other: OAuthError.tokenFile(path: request.tokenFile, message: "the refresh failed: \(message ?? "")")
            }
        }
    }

    // MARK: The asking side

    /// Runs the helper for one refresh and waits for its answer; the token is on disk when this returns.
    func refresh(_ request: Request) async throws {
        let input = try JSONEncoder().encode(request)
        let output = try await Task.detached { try self.spawnAndWait(input) }.value
        guard let outcome = try? JSONDecoder().decode(Outcome.self, from: output) else {
            throw OAuthError.tokenFile(
                path: request.tokenFile, message: "the refresh helper \(executable) gave no answer")
        }
        if let error = outcome.error(request) { throw error }
    }

    /// Starts the helper in a session of its own with `input` on its standard input, and returns what it wrote on
    /// standard output once it has ended. Blocking: run off the concurrency pool.
    private func spawnAndWait(_ input: Data) throws -> Data {
        // Close-on-exec, so a program another thread starts does not inherit them (an inherited write end would keep
        // this side from ever seeing the helper's output end); the helper gets its copies by dup2. (`pipe2` is not
        // visible to Swift here, so the flag is set right after; a program started in between holds a copy only
        // until it execs.)
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0 else { throw spawnFailure(errno) }
        guard pipe(&fromChild) == 0 else { close(toChild[0]); close(toChild[1]); throw spawnFailure(errno) }
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        // Its standard error is this process's while requests are traced (`LLVS_HTTP_TRACE`), so the refresh shows
        // among them; otherwise nothing (a helper that outlives its asker has no one to tell).
        if ProcessInfo.processInfo.environment["LLVS_HTTP_TRACE"] == nil {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        // The helper may outlive this process: it holds nothing of ours but the two pipes (a copy of a pipe another
        // thread has open would keep that pipe's reader from ever seeing its end).
        SpawnFileActions.closeInheritedDescriptors(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A session of its own (POSIX_SPAWN_SETSID), and SIGPIPE at its default: the helper ignores it itself, so an
        // asker that died before reading the answer never stops it before the token is written.
        posix_spawnattr_setflags(&attributes, Int16(Self.spawnSetSID))
        var pid: pid_t = 0
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard status == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw spawnFailure(status)
        }
        // The request is far below a pipe's capacity: it is all in the pipe before the helper reads it, even if
        // this process dies right after.
        _ = input.withUnsafeBytes { write(toChild[1], $0.baseAddress, $0.count) }
        close(toChild[1])
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fromChild[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            output.append(contentsOf: buffer[0..<count])
            if output.count > 1 << 20 { break }  // an answer is a few bytes; more is not one
        }
        close(fromChild[0])
        var exitStatus: Int32 = 0
        while waitpid(pid, &exitStatus, 0) < 0, errno == EINTR {}
        return output
    }

    /// glibc's `POSIX_SPAWN_SETSID`.
    private static let spawnSetSID: Int32 = 0x80

    private func spawnFailure(_ code: Int32) -> OAuthError {
        .tokenFile(path: executable, message: "cannot start the refresh helper: \(String(cString: strerror(code)))")
    }

    // MARK: The helper's side

    /// Serves one refresh: reads the request on standard input, refreshes (under the token file's lock, unless
    /// another process refreshed first), writes the token file, then answers on standard output. Returns the exit
    /// status for the helper program.
    public static func serve() async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let input = FileHandle.standardInput.readDataToEndOfFile()
        guard let request = try? JSONDecoder().decode(Request.self, from: input) else {
            let outcome = Outcome(OAuthError.malformedToken("the refresh request is not readable"))
            answer((try? JSONEncoder().encode(outcome)) ?? Data())
            return 2
        }
        var configuration = OAuthConfiguration(
            authorizationURL: request.tokenURL, tokenURL: request.tokenURL, clientId: request.clientId,
            clientSecret: request.clientSecret, scopes: request.scopes)
        configuration.clientAuthentication = request.basicClientAuthentication ? .basic : .body
        let source = OAuthTokenSource(
            file: TokenFile(path: request.tokenFile), configuration: configuration, http: HTTPClient(),
            reauthorizeCommand: request.reauthorizeCommand, refreshMargin: request.refreshMargin)
        var failure: (any Error)?
        do { _ = try await source.refresh(replacing: request.rejected) } catch { failure = error }
        answer((try? JSONEncoder().encode(Outcome(failure))) ?? Data())
        return failure == nil ? 0 : 1
    }

    /// Answers the asker, who may be gone (killed while the refresh ran): the write then fails with EPIPE, which is
    /// no failure of the refresh. (FileHandle's non-throwing `write` would stop the helper with a trap.)
    private static func answer(_ data: Data) {
        try? FileHandle.standardOutput.write(contentsOf: data)
    }
}

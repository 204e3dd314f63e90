import Foundation
import LLVSHTTP

/// Nextcloud's Login Flow v2: signing in without typing a password here. The client asks for a flow, the user
/// opens its login address in any browser and grants access, and the client's polls then receive an app password
/// (which works with HTTP Basic like a password, and can be revoked on its own in the server's settings).
public struct NextcloudLoginFlow: Sendable {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The server answered the start of the flow with something other than Login Flow v2's JSON.
        case notNextcloud(server: String, status: Int)
        /// A poll's answer could not be read, or the server refused it.
        case unexpectedAnswer(url: String, status: Int)
        /// Nobody granted access before the deadline (a flow's token lives 20 minutes).
        case notGranted(after: Duration)
        /// The server named a login address or poll endpoint on another origin (scheme, host and port) than its own:
        /// the poll token (and the app password it returns) would go there.
        case foreignAddress(what: String, url: String, server: String)
        /// Access was granted to another user than the one whose files the remote's URL names.
        case otherUser(granted: String, expected: String)

        public var description: String {
            switch self {
            case .notNextcloud(let server, let status):
                "\(server) did not start a Login Flow v2 (POST /index.php/login/v2 answered \(status)): is it a Nextcloud or ownCloud server?"
            case .unexpectedAnswer(let url, let status):
                "the Login Flow v2 poll at \(url) answered \(status) with nothing usable"
            case .notGranted(let after):
                "access was not granted within \(NextcloudLoginFlow.spoken(after)); run the command again for a new login address"
            case .foreignAddress(let what, let url, let server):
                "the server named a \(what) elsewhere than itself (\(TerminalSafe.text(url)), not on \(server)); nothing was sent there"
            case .otherUser(let granted, let expected):
                "access was granted to \(TerminalSafe.text(granted)), but the remote's files are \(expected)'s; sign in as \(expected), or change the remote's URL"
            }
        }
    }

    /// "5 seconds", "1 minute", "20 minutes".
    static func spoken(_ duration: Duration) -> String {
        let seconds = Int(duration.components.seconds)
        if seconds < 60 { return seconds == 1 ? "1 second" : "\(seconds) seconds" }
        let minutes = seconds / 60
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    /// What the server grants: who signed in and the app password.
    public struct Grant: Sendable, Equatable {
        public var loginName: String
        public var appPassword: String
    }

    /// A flow started: the address for the user to open, and where to poll with which token.
    public struct Started: Sendable {
        public var login: URL
        public var poll: URL
        public var token: String
    }

    /// The server's own address (`https://cloud.example/nc`), without `/remote.php/…`.
    public let server: URL
    let http: HTTPClient

    public init(server: URL, http: HTTPClient = HTTPClient()) {
        self.server = server
        self.http = http
    }

    /// The server of a files URL (`…/remote.php/dav/files/USER/…`); nil for any other URL.
    public static func server(ofFilesURL url: URL) -> URL? { NextcloudLayout(filesURL: url)?.serverURL }

    public func start() async throws -> Started {
        let url = server.appendingPathComponent("index.php/login/v2")
        var request = HTTPRequest(method: "POST", url: url)
        request.headers["User-Agent"] = "llvs (Login Flow v2)"
        let response = try await http.send(request)
        guard response.status == 200,
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let poll = object["poll"] as? [String: Any], let token = poll["token"] as? String, !token.isEmpty,
            let endpoint = (poll["endpoint"] as? String).flatMap(URL.init(string:)),
            endpoint.scheme?.hasPrefix("http") == true,
            let login = (object["login"] as? String).flatMap(URL.init(string:)), login.scheme?.hasPrefix("http") == true
        else {
            throw Failure.notNextcloud(server: server.absoluteString, status: response.status)
        }
        // Both on the server's own origin: never another port or host, never plain HTTP for an HTTPS server.
        for (what, url) in [("login address", login), ("poll endpoint", endpoint)] where !Self.sameOrigin(url, server) {
            throw Failure.foreignAddress(what: what, url: url.absoluteString, server: Self.origin(server))
        }
        return Started(login: login, poll: endpoint, token: token)
    }

    /// One poll: the grant once access is granted (and the token spent), nil while the user has not (404).
    public func poll(_ started: Started) async throws -> Grant? {
        var request = HTTPRequest(method: "POST", url: started.poll)
        request.headers["Content-Type"] = "application/x-www-form-urlencoded"
        request.body = .data(FormEncoding.encode([("token", started.token)]))
        let response = try await http.send(request)
        if response.status == 404 { return nil }
        guard response.status == 200,
            let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let loginName = object["loginName"] as? String, !loginName.isEmpty,
            let appPassword = object["appPassword"] as? String, !appPassword.isEmpty
        else {
            throw Failure.unexpectedAnswer(url: started.poll.absoluteString, status: response.status)
        }
        return Grant(loginName: loginName, appPassword: appPassword)
    }

    /// Polls every `interval` until access is granted, or fails after `timeout`. With `user`, a grant to anyone else
    /// is refused (its app password is not kept).
    public func waitForGrant(
        _ started: Started, every interval: Duration = .seconds(2), timeout: Duration = .seconds(1200),
        user: String? = nil
    ) async throws -> Grant {
        let clock = ContinuousClock(), deadline = clock.now + timeout
        while true {
            if let grant = try await poll(started) {
                if let user, grant.loginName != user {
                    throw Failure.otherUser(granted: grant.loginName, expected: user)
                }
                return grant
            }
            guard clock.now + interval < deadline else { throw Failure.notGranted(after: timeout) }
            try await Task.sleep(for: interval)
        }
    }

    static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }

    static func sameOrigin(_ url: URL, _ server: URL) -> Bool { origin(url) == origin(server) }
}

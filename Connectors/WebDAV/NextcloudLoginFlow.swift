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
        case notGranted(minutes: Int)

        public var description: String {
            switch self {
            case .notNextcloud(let server, let status):
                "\(server) did not start a Login Flow v2 (POST /index.php/login/v2 answered \(status)): is it a Nextcloud or ownCloud server?"
            case .unexpectedAnswer(let url, let status): "the Login Flow v2 poll at \(url) answered \(status) with nothing usable"
            case .notGranted(let minutes): "access was not granted within \(minutes) minutes; run the command again for a new login address"
            }
        }
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
        guard response.status == 200, let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let poll = object["poll"] as? [String: Any], let token = poll["token"] as? String, !token.isEmpty,
              let endpoint = (poll["endpoint"] as? String).flatMap(URL.init(string:)), endpoint.scheme?.hasPrefix("http") == true,
              let login = (object["login"] as? String).flatMap(URL.init(string:)), login.scheme?.hasPrefix("http") == true else {
            throw Failure.notNextcloud(server: server.absoluteString, status: response.status)
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
        guard response.status == 200, let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let loginName = object["loginName"] as? String, !loginName.isEmpty,
              let appPassword = object["appPassword"] as? String, !appPassword.isEmpty else {
            throw Failure.unexpectedAnswer(url: started.poll.absoluteString, status: response.status)
        }
        return Grant(loginName: loginName, appPassword: appPassword)
    }

    /// Polls every `interval` until access is granted, or fails after `timeout`.
    public func waitForGrant(_ started: Started, every interval: Duration = .seconds(2), timeout: Duration = .seconds(1200)) async throws -> Grant {
        let clock = ContinuousClock(), deadline = clock.now + timeout
        while true {
            if let grant = try await poll(started) { return grant }
            guard clock.now + interval < deadline else { throw Failure.notGranted(minutes: max(1, Int(timeout.components.seconds / 60))) }
            try await Task.sleep(for: interval)
        }
    }
}

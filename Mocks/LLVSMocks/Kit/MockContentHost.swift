import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A second listener for a mock's pre-authenticated URLs, as real services hand them out on other hosts: OneDrive
/// downloads redirect to one, Box to dl.boxcloud.com, pCloud to its content hosts, and upload sessions live on
/// their own URLs. Each published URL carries its own unguessable token, so the client must not (and must not
/// need to) send the account's credentials there; the log shows whether it did.
public final class MockContentHost: Sendable {
    public let server: MockHTTPServer
    public let hostName: String
    private let published: Published

    private final class Published: Sendable {
        let contents = Mutex<[String: (content: MockContent, expires: Date?)]>([:])
    }

    /// `extra` answers what is not a published download (a service's upload-session URLs); nil passes it on.
    /// `refusesCredentials` answers 401 to any request carrying Authorization, as OneDrive's upload and download
    /// hosts do, so a client that leaks its token fails loudly.
    /// `hostName` is how its URLs name it: `localhost` makes it another host than the API's `127.0.0.1` for clients
    /// that decide by host name, not port, where a token may go (as the real hosts differ by name).
    /// `namedFaultsFrom`: the API host's faults, whose named faults reach this host too.
    public init(
        faults: MockFaults = MockFaults(), namedFaultsFrom: MockFaults? = nil, hostName: String = "127.0.0.1",
        refusesCredentials: Bool = false,
        extra: (@Sendable (IncomingRequest) -> MockResponse?)? = nil
    ) throws {
        let published = Published()
        self.published = published
        self.hostName = hostName
        server = try MockHTTPServer(faults: faults, namedFaultsFrom: namedFaultsFrom) { request in
            if refusesCredentials, request.headers["Authorization"] != nil {
                return .json(
                    401,
                    [
                        "error": [
                            "code": "unauthenticated",
                            "message": "This URL is pre-authenticated; do not send an Authorization header.",
                        ]
                    ])
            }
            if let answer = extra?(request) { return answer }
            let token = request.path.split(separator: "/").last.map(String.init) ?? ""
            guard request.method == "GET" || request.method == "HEAD",
                let link = published.contents.withLock({ $0[token] })
            else { return .empty(404) }
            // A link past its time is refused as gone, as pCloud's content hosts refuse a stale link.
            if let expires = link.expires, expires <= Date() { return .empty(410) }
            return link.content.response(range: request.headers["Range"])
        }
    }

    /// A URL on this host that serves `content` to anyone holding it, until `expires` when given.
    public func publish(_ content: MockContent, expires: Date? = nil) -> URL {
        let token = UUID().uuidString.lowercased()
        published.contents.withLock { $0[token] = (content, expires) }
        return baseURL.appendingPathComponent("content").appendingPathComponent(token)
    }

    /// Makes every published URL stale now, as time passing would.
    public func expireAll() {
        published.contents.withLock { links in
            for token in links.keys { links[token]?.expires = .distantPast }
        }
    }

    /// The host's base URL under its host name.
    public var baseURL: URL { URL(string: "http://\(hostName):\(server.port)")! }

    public func withdraw(_ url: URL) {
        published.contents.withLock { _ = $0.removeValue(forKey: url.lastPathComponent) }
    }

    /// Requests that arrived with an `Authorization` header (there should be none).
    public var requestsWithCredentials: [MockLogEntry] { server.log.filter { $0.headers["Authorization"] != nil } }

    public func stop() { server.stop() }
}

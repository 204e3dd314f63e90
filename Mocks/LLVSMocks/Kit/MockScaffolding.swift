import Foundation
import LLVSHTTP
import Synchronization

/// How a mock's HTTP server reaches the mock that owns it. The server starts inside the mock's `init`, before `self`
/// exists, and the mock owns the server, so the server holds the mock weakly and is pointed at it at the end of
/// `init`; a request that arrives after the mock is gone is answered 503.
final class MockBackReference<Mock: AnyObject & Sendable>: Sendable {
    private struct Weak {
        // Only read and written under the mutex below.
        weak var value: Mock?
    }
    private let target = Mutex(Weak())

    init() {}

    /// Points the server at its mock (the last line of the mock's `init`).
    func attach(_ mock: Mock) { target.withLock { $0.value = mock } }

    /// `answer` from the mock, or 503 when it is gone.
    func answer(_ answer: (Mock) -> MockResponse?) -> MockResponse? {
        guard let mock = target.withLock({ $0.value }) else { return .empty(503) }
        return answer(mock)
    }

    /// `answer` from the mock, or 503 when it is gone.
    func answer(_ answer: (Mock) -> MockResponse) -> MockResponse {
        guard let mock = target.withLock({ $0.value }) else { return .empty(503) }
        return answer(mock)
    }
}

/// A mock whose API server answers every request through `handle`, failing as its service fails (its fault body and
/// its named faults): what `MockBackReference.apiServer` starts for it.
protocol MockAPIService: AnyObject, Sendable {
    func handle(_ request: IncomingRequest) -> MockResponse
    static var faultBody: MockHTTPServer.FaultBody { get }
    static var namedFaults: [MockNamedFault] { get }
}

extension MockBackReference where Mock: MockAPIService {
    /// The mock's API server, answering through the mock once `attach` points this at it.
    func apiServer(port: UInt16, faults: MockFaults) throws -> MockHTTPServer {
        try MockHTTPServer(
            port: port, faults: faults, faultBody: Mock.faultBody, faultCatalogue: Mock.namedFaults
        ) { request in
            self.answer { $0.handle(request) }
        }
    }
}

/// Where a mock keeps uploaded content while it runs: a fresh folder under the system's temporary folder, named for
/// the service, removed by the mock's `stop()`.
enum MockStorageFolder {
    static func make(_ service: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-mock-\(service)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A mock's `stop()`: its listeners closed, then the folder removed.
    static func stop(_ listeners: [any MockListener], removing folder: URL) {
        for listener in listeners { listener.stop() }
        try? FileManager.default.removeItem(at: folder)
    }
}

/// Something of a mock that listens for connections until stopped.
protocol MockListener: Sendable {
    func stop()
}

extension MockHTTPServer: MockListener {}
extension MockContentHost: MockListener {}

/// What every mock service offers a test through its API server: the base URL a client is pointed at, the faults
/// it can be told to inject, and the log of what it answered.
public protocol MockService: AnyObject, Sendable {
    /// The service's API server.
    var server: MockHTTPServer { get }
}

extension MockService {
    /// The base every configurable host points at (`http://127.0.0.1:PORT`).
    public var endpoint: URL { server.baseURL }
    public var faults: MockFaults { server.faults }
    public var log: [MockLogEntry] { server.log }
}

/// A mock service with its own OAuth 2 server.
public protocol MockOAuthService: MockService {
    var oauth: MockOAuthServer { get }
}

extension MockOAuthService {
    /// Makes every access token issued so far expired, so the next request must refresh.
    public func expireAccessTokens() { oauth.expireAccessTokens() }
}

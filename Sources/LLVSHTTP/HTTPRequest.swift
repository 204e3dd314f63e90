import Foundation

/// Where a request's body comes from. Files are read as the transfer goes, never loaded whole.
public enum HTTPRequestBody: Sendable {
    case none
    case data(Data)
    /// A local file, or part of one (`offset`, `length`), streamed.
    case file(URL, offset: Int64 = 0, length: Int64? = nil)
    /// A `multipart/form-data` body (Box and pCloud uploads), built and streamed by libcurl's MIME API: file parts
    /// are read as the transfer goes. The Content-Type with its boundary is set by libcurl.
    case form([FormPart])
}

/// One part of a `multipart/form-data` body, in the order given (Box wants `attributes` before `file`).
public struct FormPart: Sendable {
    public enum Content: Sendable {
        case data(Data)
        case file(URL)
    }

    public var name: String
    public var filename: String?
    public var contentType: String?
    public var content: Content

    public init(name: String, filename: String? = nil, contentType: String? = nil, content: Content) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.content = content
    }
}

/// Where a response's body goes. In memory it is bounded, so a hostile or mistaken answer of hundreds of megabytes
/// fails cleanly; to a file it is streamed.
public enum HTTPResponseDestination: Sendable {
    case memory(limit: Int)
    case file(URL)
    /// Into `length` bytes of an existing file, at `offset`: one piece of a larger file downloaded in pieces at once
    /// (a snapshot's chunks), with no buffer of its own. The file is neither created nor truncated. A successful
    /// answer must fill the region exactly: longer or shorter, it fails with `unexpectedLength`, and no byte is
    /// written past the region whatever the server sends.
    case region(URL, offset: Int64, length: Int64)

    public static let defaultMemoryLimit = 64 * 1024 * 1024
    public static let memory = HTTPResponseDestination.memory(limit: defaultMemoryLimit)
}

/// Credentials curl applies itself (so Digest's challenge and response are libcurl's, not ours).
public struct HTTPCredentials: Sendable, Equatable {
    public enum Scheme: Sendable, Equatable { case basic, digest, any }
    public var user: String
    public var password: String
    public var scheme: Scheme

    public init(user: String, password: String, scheme: Scheme) {
        self.user = user
        self.password = password
        self.scheme = scheme
    }
}

public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: HTTPHeaders
    public var body: HTTPRequestBody
    public var destination: HTTPResponseDestination
    /// Whether the request may be sent again after a failure. Nil: decided by the method (GET, HEAD, OPTIONS,
    /// PUT, DELETE and PROPFIND are; POST, PATCH and the rest are not unless the caller says so).
    public var isSafeToRepeat: Bool?
    /// Whether the request changes something on the server; nil: as its method says (everything but GET, HEAD,
    /// PROPFIND, OPTIONS and REPORT). A service whose API changes things with GET (pCloud) says so per request. Where a
    /// fault meant for "the request that acts" lands (`HTTPFaultInjector.Target.change`).
    public var changesRemote: Bool?
    /// Whether a refusal (429, 503, or an answer the caller's `isRetryable` picks) may be retried even when the
    /// request is not safe to repeat: true for services that document that a refused request was not acted on
    /// (Google Drive's rate-limit answers). Network failures still repeat only what is safe to repeat.
    public var repeatsAfterRefusal = false
    /// Credentials for curl to answer Basic or Digest challenges with; never sent to another host after a redirect.
    public var credentials: HTTPCredentials?
    /// Whether to follow redirects (the client's own logic, which drops credentials across hosts).
    public var followsRedirects = true
    /// Attempts the client makes at most; nil for the policy's. 1 when the caller is itself the retry point (a
    /// create that must look before sending again, a resumable upload that asks the session what it holds).
    public var maximumAttempts: Int?
    /// A request that obtains credentials (an OAuth token request): injected faults pass it by.
    public var isCredentialExchange = false
    /// Statuses the caller handles itself, returned at once and never retried (a WebDAV PUT into a folder not seen
    /// yet, whose 500 on nginx means "no such folder" and is answered by making it, not by waiting).
    public var finalStatuses: Set<Int> = []
    /// How long the answer may stay silent before the transfer counts as stalled, where the server is silent on
    /// purpose (a long poll holds its answer for minutes); nil for the client's `stallTimeout`.
    public var stallTimeout: Duration?

    public init(
        method: String = "GET", url: URL, headers: HTTPHeaders = [:], body: HTTPRequestBody = .none,
        destination: HTTPResponseDestination = .memory, isSafeToRepeat: Bool? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.destination = destination
        self.isSafeToRepeat = isSafeToRepeat
    }

    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PROPFIND", "TRACE"]

    public var repeatable: Bool { isSafeToRepeat ?? Self.idempotentMethods.contains(method.uppercased()) }
}

public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// The body, when it was kept in memory.
    public var body: Data
    /// The URL that answered, after redirects.
    public var url: URL

    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    public var isSuccess: Bool { (200..<300).contains(status) }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Failures below HTTP: the network, local files, limits. HTTP statuses are answers, not errors.
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libcurl failed the transfer (`code` is its CURLcode).
    case transport(code: Int32, message: String, url: String)
    case cancelled
    case tooManyRedirects(url: String)
    /// The answer was larger than the memory limit set for it.
    case responseTooLarge(limit: Int, url: String)
    /// The answers of all transfers together would pass the client's in-memory budget.
    case memoryBudgetExceeded(limit: Int, url: String)
    case localFile(path: String, message: String)
    case invalidURL(String)
    /// A successful answer whose body does not have the length its destination region was given (`received` is at
    /// least one byte more than `expected` when it was longer, as reading stops there).
    case unexpectedLength(expected: Int64, received: Int64, url: String)

    /// libcurl's codes for a server never reached (a proxy or host not resolved, a connection refused, a TLS handshake
    /// or certificate refused); after any other, the server was reached and the transfer went wrong on the way.
    static let unreached: Set<Int32> = [5, 6, 7, 35, 60]

    public var description: String {
        switch self {
        case .transport(let code, let message, let url):
            Self.unreached.contains(code)
                ? "Could not reach \(url): \(message) (curl error \(code))."
                : "The transfer with \(url) failed: \(message) (curl error \(code))."
        case .cancelled: "The transfer was cancelled."
        case .tooManyRedirects(let url): "Too many redirects from \(url)."
        case .responseTooLarge(let limit, let url): "The answer from \(url) is larger than the \(limit)-byte limit."
        case .memoryBudgetExceeded(let limit, let url):
            "The answer from \(url) would take the answers held in memory past \(limit) bytes; it was refused."
        case .localFile(let path, let message): "The local file \(path) failed: \(message)."
        case .invalidURL(let text): "\(text) is not a usable URL."
        case .unexpectedLength(let expected, let received, let url):
            "The answer from \(url) held \(received > expected ? "more than \(expected)" : "\(received)") bytes, where \(expected) were expected."
        }
    }
}

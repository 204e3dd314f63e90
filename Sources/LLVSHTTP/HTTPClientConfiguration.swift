import Foundation
import LLVSSupport

/// How a client connects, waits, retries and traces.
public struct HTTPClientConfiguration: Sendable {
    /// Connections at once to one host; HTTP/2 servers multiplex requests over fewer.
    public var maximumConnectionsPerHost = 8
    public var maximumTotalConnections = 64
    public var connectTimeout: Duration = .seconds(20)
    /// A transfer slower than `minimumTransferRate` for this long fails (and is retried when safe), so a server
    /// that trickles an answer cannot hold a command for ever.
    public var stallTimeout: Duration = .seconds(60)
    /// Bytes per second, averaged over `stallTimeout`, below which a transfer counts as stalled.
    public var minimumTransferRate = 1024
    public var retryPolicy = RetryPolicy()
    /// Bytes of answers all transfers together may hold in memory at once (each also has its own limit).
    public var maximumBufferedBytes = 256 * 1024 * 1024
    public var maximumRedirects = 10
    public var userAgent = "llvs-linux/1"
    /// Hosts whose TLS certificate is not checked: only test servers, named explicitly. Empty by default.
    public var insecureHosts: Set<String> = []
    /// A CA bundle, from SSL_CERT_FILE or CURL_CA_BUNDLE as curl users expect (libcurl reads the proxy variables
    /// HTTPS_PROXY, NO_PROXY and friends itself).
    public var caBundle: String?
    /// Called with one line per request and per answer, secrets redacted.
    public var trace: (@Sendable (String) -> Void)?
    /// Faults to inject into requests (`llvs conformance --faults`); nil for none.
    public var faults: HTTPFaultInjector?
    /// Where the client notes the waits it decides on (retries, Retry-After, the pacer's holds); nil: nowhere. A fault
    /// injector's own record gets them too, so a run with `--faults` can show a rate limit was waited out.
    public var waitRecord: HTTPWaitRecord?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        caBundle = environment["SSL_CERT_FILE"] ?? environment["CURL_CA_BUNDLE"]
        if environment["LLVS_HTTP_TRACE"] != nil {
            // A write that fails (standard error closed: the refresh helper's asker is gone) is dropped; the
            // non-throwing `write` would stop the process with a trap, the helper in the middle of a refresh.
            trace = { line in try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8)) }
        }
    }
}

import Foundation
import LLVSHTTP

/// A way the real service fails, by name: what it sends (status, headers, body) and which requests it can meet,
/// so `llvs-mock SERVICE --faults NAME` injects exactly what a client meets in the wild and `--list-faults` says what
/// that is. A fault either replaces the answer (`answer`) or asks the mock to act (`behavior`: a race another client
/// won, an item a listing does not show yet), which the mock's own code carries out.
public struct MockNamedFault: Sendable {
    public enum Effect: Sendable, Equatable {
        /// Answer with this instead of serving the request.
        case answer(MockFault)
        /// The service does something itself when it meets the request; the mock asks `MockFaults.fires`.
        case behavior
    }

    public var name: String
    /// What the real service sends and when, in a line for `--list-faults`.
    public var summary: String
    /// Whether a client should wait it out (true) or end with the service's reason (false).
    public var isTransient: Bool
    public var scope: MockFaultScope
    public var effect: Effect

    public init(_ name: String, _ summary: String, transient: Bool, scope: MockFaultScope, effect: Effect) {
        self.name = name
        self.summary = summary
        isTransient = transient
        self.scope = scope
        self.effect = effect
    }

    /// An answer with a JSON body, as most services send their errors.
    public static func json(
        _ name: String, _ summary: String, transient: Bool, scope: MockFaultScope, status: Int,
        headers: HTTPHeaders = [:], body: String
    ) -> MockNamedFault {
        var all = headers
        all["Content-Type"] = "application/json"
        return MockNamedFault(
            name, summary, transient: transient, scope: scope,
            effect: .answer(.answer(status: status, headers: all, body: Data(body.utf8))))
    }

    /// The refusal of a refresh token the user revoked (or that was used up): `400 invalid_grant` on the token
    /// endpoint, as every OAuth 2 service answers it. Final: only a new sign-in helps.
    public static func invalidGrant(tokenPaths: [String], description: String) -> MockNamedFault {
        let body = #"{"error":"invalid_grant","error_description":"\#(description)"}"#
        return json(
            "invalid-grant", "400 {\"error\":\"invalid_grant\"} from the token endpoint: the refresh token was revoked",
            transient: false, scope: MockFaultScope(methods: ["POST"], paths: tokenPaths, describe: "token refreshes"),
            status: 400, body: body)
    }

    /// Eventual consistency: a new file is readable at once (by its ID or path) but left out of its folder's next
    /// two listings, as services whose listings come from an index updated a little later do.
    public static func listingLag(scope: MockFaultScope) -> MockNamedFault {
        MockNamedFault(
            "listing-lag",
            "a new file is readable at once but missing from its folder's next 2 listings (eventual consistency)",
            transient: true, scope: scope, effect: .behavior)
    }

    /// How many listings of its folder a lagging new file stays out of.
    public static let lagListings = 2

    /// One line of `--list-faults`.
    public var listing: String {
        let padded = name.padding(toLength: max(name.count, 26), withPad: " ", startingAt: 0)
        return "\(padded)\(isTransient ? "transient" : "final    ")  \(summary) [\(scope.describe)]"
    }
}

/// Which requests a named fault can meet: methods (nil: any) and path pieces (any of them; empty: every path),
/// less the paths it must never meet (a rate limit on an API is not answered by its token endpoint).
public struct MockFaultScope: Sendable {
    public var methods: Set<String>?
    public var paths: [String]
    public var excluding: [String]
    public var describe: String

    public init(methods: Set<String>? = nil, paths: [String] = [], excluding: [String] = [], describe: String) {
        self.methods = methods
        self.paths = paths
        self.excluding = excluding
        self.describe = describe
    }

    public func matches(_ request: MockRequestSummary) -> Bool {
        if let methods, !methods.contains(request.method.uppercased()) { return false }
        if excluding.contains(where: request.path.contains) { return false }
        return paths.isEmpty || paths.contains(where: request.path.contains)
    }
}

/// A service's named faults, for `--faults` and `--list-faults`.
public protocol MockFaultCatalogue {
    static var namedFaults: [MockNamedFault] { get }
}

extension Array where Element == MockNamedFault {
    public subscript(named name: String) -> MockNamedFault? { first { $0.name == name } }
}

import Foundation
import LLVS
import LLVSHTTP

/// Where pCloud is and how the connector uses it (docs/services/pcloud.md). An account lives in one of two
/// regions, each with its own API host; which one is learned at sign-in (the redirect's `hostname`, the token
/// answer's `locationid`) and kept in the token file, so every later run talks to the right host.
public struct PCloudConfiguration: Sendable {
    public enum Region: String, Sendable, CaseIterable {
        case us, eu

        /// The API host of the region.
        public var host: String { self == .us ? "api.pcloud.com" : "eapi.pcloud.com" }

        /// pCloud's `locationid`: 1 for the US, 2 for Europe.
        public init?(locationID: String) {
            switch locationID {
            case "1": self = .us
            case "2": self = .eu
            default: return nil
            }
        }
    }

    /// The region's API host: every method is a path below it (`GET /listfolder?folderid=0`).
    public var apiURL: URL
    /// Files up to this size go up in one `uploadfile`; larger ones through an upload session.
    public var simpleUploadLimit: Int64 = 64 * 1024 * 1024
    /// Bytes per `upload_write` of an upload session.
    public var chunkSize: Int64 = 16 * 1024 * 1024
    /// Download hosts of one link tried, in the order pCloud gives them, before the link is asked for again.
    public var maximumHostsPerLink = 3
    /// Entries per answer of the diff feed, and how many answers one look at it may take.
    public var diffPageSize = 5000
    public var maximumDiffPages = 1000

    public init(region: Region = .us) {
        apiURL = URL(string: "https://\(region.host)")!
    }

    /// A mock's (or a proxy's) API host.
    public init(endpoint: URL) {
        apiURL = endpoint
    }

    /// The API host a sign-in named: `hostname` from the token file, or the region its `locationid` says. With an
    /// `endpoint` (a mock), its scheme is used and the host must be the endpoint's own (any port, as a mock's two
    /// regions are two ports); without one, only pCloud's two API hosts are accepted.
    public init(token: OAuthToken, endpoint: URL? = nil) throws {
        if let hostname = token.extras["hostname"], !hostname.isEmpty {
            apiURL = try Self.apiURL(hostname: hostname, endpoint: endpoint)
        } else if let location = token.extras["locationid"], let region = Region(locationID: location) {
            apiURL = endpoint ?? URL(string: "https://\(region.host)")!
        } else {
            apiURL = endpoint ?? URL(string: "https://\(Region.us.host)")!
        }
    }

    /// `https://HOSTNAME` for a host pCloud has, or the endpoint's scheme and a host on the endpoint's machine.
    static func apiURL(hostname: String, endpoint: URL?) throws -> URL {
        let host = hostname.lowercased()
        if let endpoint {
            let machine = host.split(separator: ":", maxSplits: 1).first.map(String.init) ?? host
            guard machine == endpoint.host?.lowercased(),
                let url = URL(string: "\(endpoint.scheme ?? "http")://\(host)")
            else {
                throw OAuthError.malformedToken(
                    "the sign-in named the API host \(hostname), which is not the endpoint's (\(endpoint.host ?? ""))")
            }
            return url
        }
        guard Region.allCases.contains(where: { $0.host == host }) else {
            throw OAuthError.malformedToken(
                "the sign-in named the API host \(hostname), which is not one of pCloud's (api.pcloud.com, eapi.pcloud.com)"
            )
        }
        return URL(string: "https://\(host)")!
    }

    /// A method's URL with its parameters.
    func method(_ name: String, _ parameters: [(String, String)]) throws -> URL {
        try URLEscaping.url(apiURL, "/" + name, parameters)
    }

    /// pCloud's OAuth 2: authorize at my.pcloud.com, exchange the code at the region the redirect names
    /// (`https://{hostname}/oauth2_token`), keep `hostname` and `locationid`. There is no refresh: the token lives
    /// until it is revoked. `endpoint` replaces every pCloud host with a mock's (the region's port kept).
    public static func oauth(clientId: String, clientSecret: String?, endpoint: URL? = nil) -> OAuthConfiguration {
        let authorizeBase = endpoint ?? URL(string: "https://my.pcloud.com")!
        let tokenBase = endpoint ?? URL(string: "https://\(Region.us.host)")!
        var configuration = OAuthConfiguration(
            authorizationURL: authorizeBase.appendingPathComponent("oauth2/authorize"),
            tokenURL: tokenBase.appendingPathComponent("oauth2_token"),
            clientId: clientId, clientSecret: clientSecret, clientAuthentication: .body)
        configuration.regionalTokenURL = { fields in
            guard let hostname = fields["hostname"], !hostname.isEmpty else { return nil }
            return try apiURL(hostname: hostname, endpoint: endpoint).appendingPathComponent("oauth2_token")
        }
        configuration.keptRedirectFields = ["hostname", "locationid"]
        configuration.loopbackPort = endpoint == nil ? 53682 : nil
        configuration.enforcesPKCE = false
        return configuration
    }
}

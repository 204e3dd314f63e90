import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// The three kinds of Dropbox request, built once here: an RPC call (JSON in, JSON out, API host), an upload (the
/// argument in the `Dropbox-API-Arg` header, the bytes as the body, content host) and a download (the argument in the
/// header, the file as the answer, its metadata in `Dropbox-API-Result`). Every route is a POST, so each request says
/// whether it changes anything and whether it may be sent again.
struct DropboxAPI: Sendable {
    let client: ServiceClient
    let configuration: DropboxConfiguration

    /// An RPC call on the API host (or the notify host for the long poll).
    func rpc(
        _ route: String, _ argument: some Encodable, changes: Bool, safeToRepeat: Bool, host: URL? = nil
    ) throws -> HTTPRequest {
        var request = ServiceClient.jsonRequest(
            "POST", try URLEscaping.url(host ?? configuration.apiURL, "/" + route), argument, safeToRepeat: safeToRepeat
        )
        request.headers["Content-Type"] = "application/json"
        request.changesRemote = changes
        return request
    }

    /// A call on the content host: `argument` in the header, `body` the bytes (an empty body for a download, sent as
    /// `application/octet-stream`: Dropbox refuses the form type libcurl would otherwise give an empty POST).
    func content(
        _ route: String, _ argument: some Encodable, body: HTTPRequestBody = .data(Data()), changes: Bool,
        safeToRepeat: Bool
    ) throws -> HTTPRequest {
        var request = HTTPRequest(
            method: "POST", url: try URLEscaping.url(configuration.contentURL, "/" + route),
            headers: [
                "Content-Type": "application/octet-stream", "Dropbox-API-Arg": try Self.headerArgument(argument),
            ],
            body: body, isSafeToRepeat: safeToRepeat)
        request.changesRemote = changes
        return request
    }

    /// Sends an RPC call and decodes its answer.
    func call<T: Decodable>(
        _ type: T.Type, _ route: String, _ argument: some Encodable, changes: Bool, safeToRepeat: Bool, path: String
    ) async throws -> T {
        try await client.json(
            type, try rpc(route, argument, changes: changes, safeToRepeat: safeToRepeat), path: path)
    }

    /// The argument as a header value: JSON written header-safe, as Dropbox requires of a header.
    static func headerArgument(_ argument: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return HeaderSafeJSON.escape(String(decoding: try encoder.encode(argument), as: UTF8.self))
    }
}

/// `{"path": …}`: the argument of most routes.
struct DropboxPathArgument: Encodable {
    var path: String
}

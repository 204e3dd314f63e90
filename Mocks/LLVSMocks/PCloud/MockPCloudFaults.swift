import Foundation

/// pCloud's failures by name, each an HTTP 200 with a result code, as pCloud sends every failure.
extension MockPCloudServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let api = MockFaultScope(
            excluding: ["/oauth2_token", "/oauth2/authorize", "/content/"], describe: "API methods")
        let uploads = MockFaultScope(paths: ["/uploadfile", "/upload_write", "/upload_save"], describe: "uploads")
        func result(_ code: Int, _ message: String) -> String { #"{"result":\#(code),"error":"\#(message)"}"# }
        return [
            .json(
                "too-many-logins", "result 4000 in HTTP 200: too many login tries from this IP address",
                transient: true, scope: api,
                status: 200, body: result(4000, "Too many login tries from this IP address.")),
            .json(
                "internal-error", "result 5000 in HTTP 200: internal error", transient: true, scope: api, status: 200,
                body: result(5000, "Internal error. Try again later.")),
            .json(
                "upload-error", "result 5001 in HTTP 200: internal upload error", transient: true, scope: uploads,
                status: 200,
                body: result(5001, "Internal upload error.")),
            .json(
                "over-quota", "result 2008 in HTTP 200: the user is over quota", transient: false, scope: uploads,
                status: 200,
                body: result(2008, "User is over quota.")),
            .listingLag(scope: MockFaultScope(paths: ["/uploadfile", "/upload_save"], describe: "uploads")),
            .json(
                "token-revoked", "result 2094 in HTTP 200: the access token was revoked", transient: false, scope: api,
                status: 200,
                body: result(2094, "Invalid 'access_token' provided.")),
        ]
    }
}

import Foundation

/// Box's failures by name: its rate limit, a commit still processing or refused right after the last part, a name
/// another client took first, a full account.
extension MockBoxServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let api = MockFaultScope(paths: ["/2.0/"], describe: "API and upload requests")
        let commits = MockFaultScope(methods: ["POST"], paths: ["/commit"], describe: "upload-session commits")
        let uploads = MockFaultScope(
            methods: ["POST"], paths: ["/api/2.0/files/content", "/upload_sessions"], excluding: ["/commit"],
            describe: "uploads and new upload sessions")
        let creations = MockFaultScope(
            methods: ["POST"], paths: ["/2.0/folders", "/api/2.0/files/content"], describe: "new folders and files")
        func body(_ status: Int, _ code: String, _ message: String) -> String {
            #"{"type":"error","status":\#(status),"code":"\#(code)","message":"\#(message)","help_url":"http://developers.box.com/docs/#errors","request_id":"llvsmock"}"#
        }
        return [
            .json(
                "rate-limited", "429 rate_limit_exceeded with retry-after", transient: true, scope: api, status: 429,
                headers: ["retry-after": "1"],
                body: body(429, "rate_limit_exceeded", "Request rate limit exceeded, please try again later")),
            MockNamedFault(
                "commit-processing", "202 with Retry-After to a commit: the parts are still being processed",
                transient: true,
                scope: commits,
                effect: .answer(
                    .answer(status: 202, headers: ["Retry-After": "1", "Content-Length": "0"], body: Data()))),
            .json(
                "parts-mismatch", "400 parts_mismatch to a commit right after the last part", transient: true,
                scope: commits, status: 400,
                body: body(400, "parts_mismatch", "Parts' list does not match uploaded parts")),
            MockNamedFault(
                "name-in-use",
                "409 item_name_in_use: another client made the same name first (the mock makes it, then refuses)",
                transient: true, scope: creations, effect: .behavior),
            .json(
                "storage-full", "403 storage_limit_exceeded: the account is full", transient: false, scope: uploads,
                status: 403,
                body: body(403, "storage_limit_exceeded", "Account storage limit reached")),
            .listingLag(
                scope: MockFaultScope(
                    methods: ["POST"], paths: ["/api/2.0/files/content", "/commit"], describe: "uploads")),
            .invalidGrant(tokenPaths: ["/oauth2/token"], description: "Invalid refresh token"),
        ]
    }
}

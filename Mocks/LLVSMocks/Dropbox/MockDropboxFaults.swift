import Foundation

/// Dropbox's failures by name: its rate limit, write contention on a namespace, a full account, an expired access
/// token, a cursor let go, a session that lost a piece's answer, listing lag, a revoked refresh token.
extension MockDropboxServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let api = MockFaultScope(paths: ["/2/"], excluding: ["/longpoll"], describe: "API and content requests")
        let writes = MockFaultScope(
            methods: ["POST"],
            paths: [
                "/2/files/upload", "/2/files/upload_session/finish", "/2/files/delete_v2", "/2/files/create_folder_v2",
                "/2/files/move_v2", "/2/files/copy_v2",
            ],
            excluding: ["/upload_session/start", "/upload_session/append"], describe: "writes")
        let uploads = MockFaultScope(
            methods: ["POST"], paths: ["/2/files/upload", "/2/files/upload_session/finish"],
            excluding: ["/upload_session/start", "/upload_session/append"], describe: "uploads and commits")
        let feed = MockFaultScope(methods: ["POST"], paths: ["/2/files/list_folder/continue"], describe: "feed pages")
        let appends = MockFaultScope(
            methods: ["POST"], paths: ["/2/files/upload_session/append_v2"], describe: "upload-session appends")
        return [
            .json(
                "too-many-requests", "429 too_many_requests with Retry-After (the mock asks for 1 s)", transient: true,
                scope: api, status: 429, headers: ["Retry-After": "1"],
                body:
                    #"{"error_summary": "too_many_requests/..", "error": {"reason": {".tag": "too_many_requests"}, "retry_after": 1}}"#
            ),
            .json(
                "too-many-write-operations",
                "429 too_many_write_operations: another write holds the namespace's lock (Retry-After 1)",
                transient: true, scope: writes, status: 429, headers: ["Retry-After": "1"],
                body:
                    #"{"error_summary": "too_many_write_operations/..", "error": {"reason": {".tag": "too_many_write_operations"}, "retry_after": 1}}"#
            ),
            MockNamedFault(
                "write-contention",
                "409 too_many_write_operations in the route's own error (an upload's path/reason, a delete's path_write, …)",
                transient: true, scope: writes, effect: .behavior),
            .json(
                "unavailable", "503 with Retry-After: Dropbox is briefly unavailable", transient: true, scope: api,
                status: 503, headers: ["Retry-After": "1"], body: #"{"error_summary": "internal_error/.."}"#),
            MockNamedFault(
                "insufficient-space", "409 path/insufficient_space in the route's own error: the account is full",
                transient: false, scope: uploads, effect: .behavior),
            .json(
                "expired-token", "401 expired_access_token: the short-lived access token ran out", transient: true,
                scope: api, status: 401,
                body: #"{"error_summary": "expired_access_token/..", "error": {".tag": "expired_access_token"}}"#),
            .json(
                "cursor-reset", "409 reset from list_folder/continue: the cursor was let go (list again)",
                transient: true, scope: feed, status: 409,
                body: #"{"error_summary": "reset/..", "error": {".tag": "reset"}}"#),
            MockNamedFault(
                "append-answer-lost",
                "an append is stored but its answer is lost (the connection drops): the next append meets incorrect_offset",
                transient: true, scope: appends, effect: .answer(.dropBeforeAnswer)),
            .listingLag(scope: uploads),
            .invalidGrant(tokenPaths: ["/oauth2/token"], description: "refresh token is invalid or revoked"),
        ]
    }
}

import Foundation

/// Drive's failures by name. Drive's rate limits come as 403 with a `usageLimits` reason (or 429) and were not acted
/// on; a daily limit and a full Drive are 403s that no wait fixes.
extension MockGoogleDriveServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let api = MockFaultScope(paths: ["/drive/v3/", "/upload/drive/v3/"], describe: "API and upload requests")
        let uploads = MockFaultScope(
            methods: ["POST", "PUT", "PATCH"], paths: ["/upload/drive/v3/"], describe: "uploads")
        func body(_ status: Int, _ domain: String, _ reason: String, _ message: String) -> String {
            #"{"error":{"errors":[{"domain":"\#(domain)","reason":"\#(reason)","message":"\#(message)"}],"code":\#(status),"message":"\#(message)"}}"#
        }
        return [
            .json(
                "user-rate-limit",
                "403 usageLimits/userRateLimitExceeded: too many requests from the user; not acted on",
                transient: true, scope: api, status: 403,
                body: body(403, "usageLimits", "userRateLimitExceeded", "User Rate Limit Exceeded")),
            .json(
                "rate-limit", "403 usageLimits/rateLimitExceeded: the project's rate; not acted on",
                transient: true, scope: api, status: 403,
                body: body(403, "usageLimits", "rateLimitExceeded", "Rate Limit Exceeded")),
            .json(
                "too-many-requests", "429 usageLimits/rateLimitExceeded", transient: true, scope: api, status: 429,
                body: body(429, "usageLimits", "rateLimitExceeded", "Rate Limit Exceeded")),
            .json(
                "backend-error", "503 global/backendError", transient: true, scope: api, status: 503,
                body: body(503, "global", "backendError", "Backend Error")),
            .json(
                "daily-limit",
                "403 usageLimits/dailyLimitExceeded: the project's daily quota is used up until midnight Pacific",
                transient: false, scope: api, status: 403,
                body: body(403, "usageLimits", "dailyLimitExceeded", "Daily Limit Exceeded")),
            .json(
                "storage-quota", "403 global/storageQuotaExceeded: the Drive is full", transient: false, scope: uploads,
                status: 403,
                body: body(403, "global", "storageQuotaExceeded", "The user's Drive storage quota has been exceeded.")),
            .listingLag(scope: uploads),
            .invalidGrant(tokenPaths: ["/token"], description: "Token has been expired or revoked."),
        ]
    }
}

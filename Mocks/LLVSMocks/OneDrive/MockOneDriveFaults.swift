import Foundation

/// Graph's failures by name: throttling with and without Retry-After, an upload session that is gone or that
/// refuses a range, a full drive.
extension MockOneDriveServer: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let api = MockFaultScope(paths: ["/v1.0/"], describe: "Graph requests")
        let fragments = MockFaultScope(methods: ["PUT"], paths: ["/upload/"], describe: "upload-session fragments")
        let uploads = MockFaultScope(
            methods: ["PUT", "POST"], paths: ["/content", "createUploadSession"], excluding: ["/upload/"],
            describe: "uploads and new upload sessions")
        func body(_ code: String, _ message: String) -> String {
            #"{"error":{"code":"\#(code)","message":"\#(message)","innerError":{"request-id":"00000000-0000-0000-0000-000000000000"}}}"#
        }
        return [
            .json(
                "throttled", "429 activityLimitReached with Retry-After (the mock asks for 1 s; Graph often 120)",
                transient: true,
                scope: api, status: 429, headers: ["Retry-After": "1"],
                body: body("activityLimitReached", "The request has been throttled")),
            .json(
                "throttled-no-retry-after", "429 activityLimitReached without Retry-After", transient: true, scope: api,
                status: 429,
                body: body("activityLimitReached", "The request has been throttled")),
            .json(
                "unavailable", "503 serviceNotAvailable with Retry-After", transient: true, scope: api, status: 503,
                headers: ["Retry-After": "1"], body: body("serviceNotAvailable", "Service unavailable")),
            .json(
                "upload-session-gone", "404 itemNotFound from the upload URL: the session vanished mid-upload",
                transient: true,
                scope: fragments, status: 404, body: body("itemNotFound", "The upload session was not found.")),
            .json(
                "wrong-range", "416 invalidRange from the upload URL: the fragment is not what the session expects",
                transient: true,
                scope: fragments, status: 416,
                body: body("invalidRange", "The uploaded fragment overlaps with data that has already been received.")),
            .json(
                "quota-full", "507 quotaLimitReached: the drive is full", transient: false, scope: uploads, status: 507,
                body: body("quotaLimitReached", "Insufficient Space Available")),
            .listingLag(scope: MockFaultScope(methods: ["PUT"], paths: ["/content", "/upload/"], describe: "uploads")),
            .invalidGrant(
                tokenPaths: ["/oauth2/v2.0/token"],
                description:
                    "AADSTS70000: The provided value for the 'refresh_token' is not valid. The refresh token has expired or been revoked."
            ),
        ]
    }
}

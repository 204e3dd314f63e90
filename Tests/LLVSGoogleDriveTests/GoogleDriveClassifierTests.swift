import Foundation
import LLVS
import LLVSHTTP
import Testing
@testable import LLVSGoogleDrive

/// Drive's classifier against answers as Google documents them (developers.google.com/drive/api/guides/handle-errors,
/// quoted in docs/services/google-drive.md), not only the bodies the mock makes.
@Suite struct GoogleDriveClassifierTests {
    let classifier = GoogleDriveClassifier()

    func response(_ status: Int, _ body: String, retryAfter: String? = nil) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "application/json; charset=UTF-8"]
        if let retryAfter { headers["Retry-After"] = retryAfter }
        return HTTPResponse(
            status: status, headers: headers, body: Data(body.utf8),
            url: URL(string: "https://www.googleapis.com/drive/v3/files")!)
    }

    static let userRateLimit =
        #"{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded","message":"User Rate Limit Exceeded"}],"code":403,"message":"User Rate Limit Exceeded"}}"#
    static let rateLimit =
        #"{"error":{"errors":[{"domain":"usageLimits","message":"Rate Limit Exceeded","reason":"rateLimitExceeded"}],"code":429,"message":"Rate Limit Exceeded"}}"#
    static let quota =
        #"{"error":{"errors":[{"domain":"global","reason":"storageQuotaExceeded","message":"The user's Drive storage quota has been exceeded."}],"code":403,"message":"The user's Drive storage quota has been exceeded."}}"#
    static let permission =
        #"{"error":{"errors":[{"domain":"global","reason":"insufficientFilePermissions","message":"The user does not have sufficient permissions for file {fileId}."}],"code":403,"message":"The user does not have sufficient permissions for file {fileId}."}}"#
    static let notFound =
        #"{"error":{"errors":[{"domain":"global","reason":"notFound","message":"File not found: {fileId}.","locationType":"parameter","location":"fileId"}],"code":404,"message":"File not found: {fileId}."}}"#
    static let backend =
        #"{"error":{"errors":[{"domain":"global","reason":"backendError","message":"Backend Error"}],"code":500,"message":"Backend Error"}}"#
    static let invalidCredentials =
        #"{"error":{"errors":[{"domain":"global","reason":"authError","message":"Invalid Credentials","locationType":"header","location":"Authorization"}],"code":401,"message":"Invalid Credentials"}}"#

    @Test func rateLimitsAreRefusalsWaitedOutAndRetried() {
        #expect(classifier.isRefusal(response(403, Self.userRateLimit)))
        #expect(classifier.isRefusal(response(429, Self.rateLimit)))
        #expect(classifier.failure(response(403, Self.userRateLimit), path: "a") == .rateLimited(retryAfter: nil))
        #expect(
            classifier.failure(response(429, Self.rateLimit, retryAfter: "7"), path: "a")
                == .rateLimited(retryAfter: .seconds(7)))
    }

    @Test func everythingElseIsFinalOrTransientAsDocumented() {
        #expect(!classifier.isRefusal(response(403, Self.quota)))
        #expect(
            classifier.failure(response(403, Self.quota), path: "a")
                == .quotaExceeded("Google Drive has no room for a: The user's Drive storage quota has been exceeded."))
        #expect(!classifier.isRefusal(response(403, Self.permission)))
        switch classifier.failure(response(403, Self.permission), path: "a") {
        case .server(403, let message): #expect(message.contains("insufficientFilePermissions"))
        case let other: Issue.record("a permission error is final, got \(other)")
        }
        #expect(classifier.failure(response(404, Self.notFound), path: "a") == .notFound(path: "a"))
        switch classifier.failure(response(500, Self.backend), path: "a") {
        case .transient: break
        case let other: Issue.record("a backend error is transient, got \(other)")
        }
        switch classifier.failure(response(401, Self.invalidCredentials), path: "a") {
        case .unauthorized: break
        case let other: Issue.record("401 is unauthorized, got \(other)")
        }
    }
}

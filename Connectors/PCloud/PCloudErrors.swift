import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// pCloud's envelope: every answer, failed or not, is HTTP 200 with `{"result": N, "error": message}`; 0 is success.
struct PCloudResult {
    var code: Int
    var message: String

    init<Answer>(_ envelope: PCloudEnvelope<Answer>) {
        code = envelope.result
        message = envelope.error ?? ""
    }

    /// Nil when the answer is not such an envelope (a proxy's page, a download).
    init?(_ response: HTTPResponse) {
        guard let envelope = try? JSONDecoder().decode(PCloudEnvelope<PCloudAnswer.Empty>.self, from: response.body)
        else { return nil }
        self.init(envelope)
    }

    /// Whether pCloud asks to try again later: too many tries from this address (4xxx) or an internal failure (5xxx).
    var asksToRetry: Bool { (4000..<6000).contains(code) }
}

/// pCloud's envelope and the method's answer, read in one pass: `result` (0 when the call worked) and `error`, then
/// the answer only when `result` is 0. Every answer carries the envelope, and a listing can hold 10,000 files: read
/// once, never a second time only to find `result`.
struct PCloudEnvelope<Answer: Decodable>: Decodable {
    var result: Int
    var error: String?
    var answer: Answer?

    private enum Key: String, CodingKey { case result, error }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        result = try container.decode(Int.self, forKey: .result)
        error = (try? container.decodeIfPresent(String.self, forKey: .error)) ?? nil
        answer = result == 0 ? try Answer(from: decoder) : nil
    }
}

/// pCloud's result codes in the shared vocabulary. 4xxx and 5xxx, answered with HTTP 200, are refusals: retried and
/// paced by the shared client like a 429. Only small answers are read for that, as an error envelope is a few bytes
/// and a listing can be megabytes.
struct PCloudClassifier: ServiceErrorClassifier {
    static let envelopeLimit = 4096
    /// What to run to sign in again (`llvs auth NAME`), named when pCloud refuses the token: its tokens never
    /// expire, so a refused one was revoked and only a new sign-in helps.
    var reauthorizeCommand: String?

    func isRefusal(_ response: HTTPResponse) -> Bool {
        response.status == 200 && response.body.count < Self.envelopeLimit
            && PCloudResult(response)?.asksToRetry == true
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        guard response.status == 200, let result = PCloudResult(response) else {
            return ServiceFailure.standard(
                response, path: path, service: "pCloud", message: String(response.text.prefix(200)))
        }
        return failure(result, path: path)
    }

    func failure(_ result: PCloudResult, path: String) -> CloudFileSystemError {
        switch result.code {
        case 2005, 2009: .notFound(path: path)
        case 2002: .parentMissing(path: path)
        case 2004: .alreadyExists(path: path)
        case 2008: .quotaExceeded("pCloud has no room for \(path): \(result.message)")
        case 1000, 2000, 2094:
            .unauthorized(
                "pCloud refused the access token for \(path) (\(result.message)); it was revoked or belongs to another region: "
                    + (reauthorizeCommand.map { "run `\($0)` to authorize the remote again" }
                        ?? "authorize the remote again"))
        case 4000..<5000: .rateLimited(retryAfter: nil)
        case 5000..<6000: .transient("pCloud answered \(result.code) for \(path): \(result.message)")
        case 2001, 2010:
            .server(status: 400, message: "pCloud refused the name in \(path) (\(result.code)): \(result.message)")
        default: .server(status: 200, message: "pCloud answered \(result.code) for \(path): \(result.message)")
        }
    }
}

/// The content hosts serve bytes, never envelopes: their answers are read by status alone.
struct PCloudContentClassifier: ServiceErrorClassifier {
    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        ServiceFailure.standard(
            response, path: path, service: "pCloud's download host", message: String(response.text.prefix(200)))
    }
}

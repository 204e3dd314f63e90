import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// pCloud's methods as the connector calls them: `GET /method?parameters` (or `PUT` with a body), answered in the
/// `result` envelope, which is checked on every answer before the rest is read. Times are asked for as unix seconds.
struct PCloudAPI: Sendable {
    let client: ServiceClient
    let classifier: PCloudClassifier
    let configuration: PCloudConfiguration

    /// Calls `method` and decodes its answer. Nearly every pCloud method is safe to send again (an upload replaces
    /// the file of that name, a write lands at its offset, a delete of what is gone is refused harmlessly), so the
    /// shared policy may repeat it after a lost answer or a 5xxx.
    func call<T: Decodable>(
        _ type: T.Type, _ method: String, _ parameters: [(String, String)] = [], put body: HTTPRequestBody? = nil,
        form: [FormPart]? = nil, attempts: Int? = nil, passing codes: Set<Int> = [], path: String
    ) async throws -> T {
        let url = try configuration.method(method, parameters + [("timeformat", "timestamp")])
        var request = HTTPRequest(
            method: body != nil ? "PUT" : form != nil ? "POST" : "GET", url: url, isSafeToRepeat: true)
        // Every pCloud method is a GET (or a PUT of a body): which ones change things is the method's to say.
        request.changesRemote = !Self.readingMethods.contains(method)
        if let body {
            request.headers["Content-Type"] = "application/octet-stream"
            request.body = body
        } else if let form {
            request.body = .form(form)
        }
        request.maximumAttempts = attempts
        let response = try await client.send(request)
        if let failure = client.failure(of: response, path: path) { throw failure }  // a proxy's page, a host gone
        let envelope: PCloudEnvelope<T>
        do {
            envelope = try JSONDecoder().decode(PCloudEnvelope<T>.self, from: response.body)
        } catch {
            // Not an envelope at all (a proxy's page) is told apart from an envelope whose answer has another shape.
            guard PCloudResult(response) != nil else { throw client.classifier.failure(response, path: path) }
            throw CloudFileSystemError.server(
                status: 200, message: "pCloud's answer to \(method) for \(path) is not the JSON expected: \(error)")
        }
        let result = PCloudResult(envelope)
        if codes.contains(result.code) { throw PCloudCallError(code: result.code, message: result.message) }
        guard result.code == 0, let answer = envelope.answer else { throw classifier.failure(result, path: path) }
        return answer
    }

    /// The methods the connector calls that only read.
    static let readingMethods: Set<String> = [
        "listfolder", "stat", "checksumfile", "getfilelink", "diff", "userinfo", "upload_info",
        "getapiserver", "currentserver",
    ]

    /// Calls a method whose answer is only the envelope.
    func call(
        _ method: String, _ parameters: [(String, String)] = [], attempts: Int? = nil, passing codes: Set<Int> = [],
        path: String
    ) async throws {
        _ = try await call(PCloudAnswer.Empty.self, method, parameters, attempts: attempts, passing: codes, path: path)
    }
}

/// A call refused with a code its caller asked to handle itself (`passing`), such as an unknown upload ID.
struct PCloudCallError: Error {
    var code: Int
    var message: String
}

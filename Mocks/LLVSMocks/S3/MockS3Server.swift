import Foundation
import LLVSHTTP
import LLVSSupport
import Synchronization

/// A mock of S3 (docs/services/s3.md), held to the real service by AWS's own Python SDK (boto3): path-style
/// addressing, every request's SigV4 signature checked against the mock's key (the same `SigV4` functions the
/// connector signs with, over the request as received), the signed payload hash and Content-MD5 checked, aws-chunked
/// bodies read, buckets, PutObject (with `If-None-Match: *`), GetObject with ranges, HeadObject, DeleteObject(s),
/// ListObjectsV2 with delimiters and continuation tokens, multipart uploads (5 MiB least part, ListParts, md5-of-md5s
/// ETags, `EntityTooSmall`, `InvalidPart`, abort), S3's XML errors, and its named faults.
public final class MockS3Server: Sendable, MockService, MockAPIService {
    public struct Settings: Sendable {
        public var accessKeyID = "LLVSMOCKACCESSKEY"
        public var secretAccessKey = "llvs-mock-secret-access-key"
        public var region = "us-east-1"
        /// Buckets that exist from the start.
        public var buckets = ["llvs"]
        /// The least size of a part but the last (S3: 5 MiB).
        public var minimumPartSize: Int64 = 5 * 1024 * 1024
        public init() {}
    }

    public let settings: Settings
    public let server: MockHTTPServer
    let state: Mutex<MockS3State>
    let storage: URL
    let stateDirectory: MockStateDirectory?

    /// `state`: a folder to keep the buckets and objects in between runs, loaded now and written after every request
    /// that may change them.
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        stateDirectory = saved
        var initial = try saved?.loadS3() ?? MockS3State()
        for bucket in settings.buckets where initial.buckets[bucket] == nil { initial.buckets[bucket] = [:] }
        state = Mutex(initial)
        storage = try MockStorageFolder.make("s3")
        let box = MockBackReference<MockS3Server>()
        server = try box.apiServer(port: port, faults: faults)
        box.attach(self)
    }

    deinit { stop() }

    public func stop() { MockStorageFolder.stop([server], removing: storage) }

    /// The keys of a bucket, sorted, for tests.
    public func keys(in bucket: String) -> [String] {
        state.withLock { ($0.buckets[bucket] ?? [:]).keys.map(\.text).sorted { Self.precedes($0, $1) } }
    }

    /// S3's order: by the keys' UTF-8 bytes.
    static func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
    /// Multipart uploads not completed or aborted.
    public var openUploads: Int { state.withLock { $0.uploads.count } }

    static let faultBody: MockHTTPServer.FaultBody = { status in
        let (code, message) =
            switch status {
            case 503: ("SlowDown", "Please reduce your request rate.")
            case 500: ("InternalError", "We encountered an internal error. Please try again.")
            case 403: ("AccessDenied", "Access Denied")
            default: ("InternalError", "An error occurred")
            }
        return MockResponse(
            status: status, headers: ["Content-Type": "application/xml"],
            body: .data(Data(MockS3Error.xml(code, message).utf8)))
    }

    // MARK: Serving

    func handle(_ request: IncomingRequest) -> MockResponse {
        defer {
            // Every request but a read may have changed something, even one answered with an error (a fault after
            // the write).
            if let stateDirectory, request.method != "GET", request.method != "HEAD" {
                state.withLock { stateDirectory.saveS3($0) }
            }
        }
        do {
            let body = try authenticate(request)
            return try route(request, body: body)
        } catch let error as MockS3Error {
            return error.response(method: request.method)
        } catch {
            return MockS3Error(500, "InternalError", "\(error)").response(method: request.method)
        }
    }

    /// The request's signature, checked as S3 checks it; returns the body, decoded from aws-chunked framing when sent
    /// so, with its payload hash checked when it was signed.
    private func authenticate(_ request: IncomingRequest) throws -> Data {
        guard let authorization = request.headers["Authorization"], authorization.hasPrefix("AWS4-HMAC-SHA256 ") else {
            throw MockS3Error(403, "AccessDenied", "Anonymous access is forbidden for this operation")
        }
        var fields: [String: String] = [:]
        for part in authorization.dropFirst("AWS4-HMAC-SHA256 ".count).split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1).map(String.init)
            if pair.count == 2 { fields[pair[0]] = pair[1] }
        }
        let credential = (fields["Credential"] ?? "").split(separator: "/").map(String.init)
        guard credential.count == 5, credential[0] == settings.accessKeyID else {
            throw MockS3Error(
                403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
        }
        guard let timestamp = request.headers["X-Amz-Date"], let signedHeaders = fields["SignedHeaders"],
            let signature = fields["Signature"]
        else { throw MockS3Error(403, "AccessDenied", "The request is missing X-Amz-Date or parts of Authorization") }
        let payloadHash = request.headers["X-Amz-Content-Sha256"] ?? SigV4.unsignedPayload
        let headers = signedHeaders.split(separator: ";").map { name in
            (String(name), request.headers.values(String(name)).joined(separator: ","))
        }
        let rawQuery = request.target.firstIndex(of: "?").map {
            String(request.target[request.target.index(after: $0)...])
        }
        let canonical = SigV4.canonicalRequest(
            method: request.method, rawPath: request.rawPath, rawQuery: rawQuery, headers: headers,
            payloadHash: payloadHash)
        var signer = SigV4(
            accessKeyID: settings.accessKeyID, secretAccessKey: settings.secretAccessKey, region: credential[2])
        signer.service = credential[3]
        guard signer.signature(canonicalRequest: canonical, timestamp: timestamp) == signature else {
            throw MockS3Error(
                403, "SignatureDoesNotMatch",
                "The request signature we calculated does not match the signature you provided. Check your key and signing method."
            )
        }
        var body = request.bodyData
        if payloadHash.hasPrefix("STREAMING-") || (request.headers["Content-Encoding"] ?? "").contains("aws-chunked") {
            body = try Self.unchunk(body)
        } else if payloadHash != SigV4.unsignedPayload, DigestStream.hex(body, .sha256) != payloadHash {
            throw MockS3Error(
                400, "XAmzContentSHA256Mismatch",
                "The provided 'x-amz-content-sha256' header does not match what was computed.")
        }
        return body
    }

    /// The payload of an aws-chunked body: `hex-size[;chunk-signature=…]\r\n bytes \r\n`, until a chunk of size 0
    /// (trailers after it are left out).
    static func unchunk(_ data: Data) throws -> Data {
        var out = Data()
        var index = data.startIndex
        let crlf = Data("\r\n".utf8)
        while index < data.endIndex {
            guard let lineEnd = data.range(of: crlf, in: index..<data.endIndex) else { break }
            let line = String(decoding: data[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else {
                throw MockS3Error(400, "IncompleteBody", "The aws-chunked body is malformed")
            }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard start + size <= data.endIndex else {
                throw MockS3Error(400, "IncompleteBody", "The aws-chunked body ends inside a chunk")
            }
            out += data[start..<start + size]
            index = start + size + 2
        }
        return out
    }

    private func route(_ request: IncomingRequest, body: Data) throws -> MockResponse {
        let parts = request.path.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bucket = parts.first.map(String.init) ?? ""
        let key = parts.count > 1 ? String(parts[1]) : ""
        let query = request.query
        if bucket.isEmpty {
            guard request.method == "GET" else { throw MockS3Error(405, "MethodNotAllowed", "Not allowed") }
            let buckets = state.withLock { $0.buckets.keys.sorted() }
            return MockS3XML.answer(
                "ListAllMyBucketsResult",
                "<Owner><ID>llvsmock</ID><DisplayName>llvs</DisplayName></Owner><Buckets>"
                    + buckets.map {
                        "<Bucket><Name>\($0)</Name><CreationDate>\(MockS3XML.time(Date()))</CreationDate></Bucket>"
                    }.joined() + "</Buckets>")
        }
        if key.isEmpty {
            switch request.method {
            case "PUT":
                state.withLock { $0.buckets[bucket] = $0.buckets[bucket] ?? [:] }
                return MockResponse(status: 200, headers: ["Location": "/\(bucket)"])
            case "HEAD":
                try requireBucket(bucket)
                return MockResponse(status: 200, headers: ["x-amz-bucket-region": settings.region])
            case "GET": return try listObjects(bucket, query)
            case "POST" where query["delete"] != nil: return try deleteObjects(bucket, body: body)
            default: throw MockS3Error(405, "MethodNotAllowed", "The method is not allowed against this resource")
            }
        }
        try requireBucket(bucket)
        switch request.method {
        case "PUT" where query["uploadId"] != nil: return try uploadPart(request, bucket, key, body: body)
        case "PUT": return try putObject(request, bucket, key, body: body)
        case "GET" where query["uploadId"] != nil: return try listParts(bucket, key, query)
        case "GET", "HEAD": return try getObject(request, bucket, key)
        case "DELETE" where query["uploadId"] != nil:
            state.withLock { _ = $0.uploads.removeValue(forKey: query["uploadId"] ?? "") }
            return .empty(204)
        case "DELETE":
            state.withLock { _ = $0.buckets[bucket]?.removeValue(forKey: MockNameKey(key)) }
            return .empty(204)
        case "POST" where query["uploads"] != nil: return createUpload(bucket, key)
        case "POST" where query["uploadId"] != nil: return try completeUpload(request, bucket, key, body: body)
        default: throw MockS3Error(405, "MethodNotAllowed", "The method is not allowed against this resource")
        }
    }

    private func requireBucket(_ bucket: String) throws {
        guard state.withLock({ $0.buckets[bucket] != nil }) else {
            throw MockS3Error(404, "NoSuchBucket", "The specified bucket does not exist", resource: bucket)
        }
    }

    /// `"<hex md5>"`.
    static func etag(of data: Data) -> String { "\"" + DigestStream.hex(data, .md5) + "\"" }

    private func keep(_ data: Data) throws -> MockContent {
        guard data.count > 1 << 20 else { return .data(data) }
        let url = storage.appendingPathComponent("object-\(UUID().uuidString)")
        try data.write(to: url)
        return .spooled(url, size: Int64(data.count))
    }

    private func checkMD5(_ request: IncomingRequest, _ body: Data) throws {
        guard let sent = request.headers["Content-MD5"] else { return }
        guard ChecksumAlgorithm.md5.base64(of: body) == sent else {
            throw MockS3Error(400, "BadDigest", "The Content-MD5 you specified did not match what we received.")
        }
    }

    private func putObject(
        _ request: IncomingRequest, _ bucket: String, _ key: String, body: Data
    ) throws
        -> MockResponse
    {
        try checkMD5(request, body)
        let content = try keep(body)
        let etag = Self.etag(of: body)
        let afterWrite = server.faults.fires("internal-error-after-write", method: request.method, path: request.path)
        try state.withLock { state in
            if request.headers["If-None-Match"] == "*", state.buckets[bucket]?[MockNameKey(key)] != nil {
                throw MockS3Error(
                    412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold",
                    resource: "/\(bucket)/\(key)")
            }
            state.buckets[bucket]?[MockNameKey(key)] = MockS3Object(content: content, etag: etag, modified: Date())
        }
        if afterWrite {
            throw MockS3Error(500, "InternalError", "We encountered an internal error. Please try again.")
        }
        return MockResponse(status: 200, headers: ["ETag": etag])
    }

    private func getObject(_ request: IncomingRequest, _ bucket: String, _ key: String) throws -> MockResponse {
        guard let object = state.withLock({ $0.buckets[bucket]?[MockNameKey(key)] }) else {
            throw MockS3Error(404, "NoSuchKey", "The specified key does not exist.", resource: "/\(bucket)/\(key)")
        }
        let headers: HTTPHeaders = [
            "Content-Type": "application/octet-stream", "ETag": object.etag,
            "Last-Modified": HTTPDate.format(object.modified),
        ]
        if request.method == "HEAD" {
            var head = headers
            head["Content-Length"] = String(object.content.size)
            head["Accept-Ranges"] = "bytes"
            return MockResponse(status: 200, headers: head)
        }
        let answer = object.content.response(range: request.headers["Range"], headers: headers)
        if answer.status == 416 {
            throw MockS3Error(416, "InvalidRange", "The requested range is not satisfiable")
        }
        return answer
    }

    /// ListObjectsV2: keys in order from `start-after` or the continuation token (the last key given, in base64),
    /// folded at `delimiter` into common prefixes, `max-keys` of them at most (each prefix counts once).
    private func listObjects(_ bucket: String, _ query: [String: String]) throws -> MockResponse {
        try requireBucket(bucket)
        let prefix = query["prefix"] ?? ""
        let delimiter = query["delimiter"].flatMap { $0.isEmpty ? nil : $0 }
        let maximum = min(1000, max(0, Int(query["max-keys"] ?? "1000") ?? 1000))
        var after = query["start-after"] ?? ""
        if let token = query["continuation-token"] {
            guard let data = Data(base64Encoded: token), let key = String(data: data, encoding: .utf8) else {
                throw MockS3Error(400, "InvalidArgument", "The continuation token provided is incorrect")
            }
            after = key
        }
        let objects = state.withLock { $0.buckets[bucket] ?? [:] }
        let prefixBytes = Array(prefix.utf8)
        var contents: [(String, MockS3Object)] = []
        var prefixes: [String] = []
        var last = after
        var truncated = false
        let sorted = objects.keys.map(\.text).sorted { Self.precedes($0, $1) }
        for key in sorted where Self.precedes(after, key) && key.utf8.starts(with: prefixBytes) {
            // Folded at the first delimiter after the prefix: everything up to it is one common prefix.
            var folded: String?
            if let delimiter {
                let rest = Array(key.utf8.dropFirst(prefixBytes.count))
                let mark = Array(delimiter.utf8)
                if let at = (0...max(0, rest.count - mark.count)).first(where: {
                    rest.count >= mark.count && Array(rest[$0..<$0 + mark.count]) == mark
                }) {
                    folded = String(decoding: prefixBytes + rest[0..<at + mark.count], as: UTF8.self)
                }
            }
            if let folded,
                !Self.precedes(after, folded) || prefixes.last.map({ $0.utf8.elementsEqual(folded.utf8) }) == true
            {
                continue
            }
            if contents.count + prefixes.count == maximum {
                truncated = true
                break
            }
            if let folded {
                prefixes.append(folded)
                // The next page starts after everything under the folded prefix.
                last = folded + "\u{10FFFF}"
            } else if let object = objects[MockNameKey(key)] {
                contents.append((key, object))
                last = key
            }
        }
        var inner = "<Name>\(bucket)</Name><Prefix>\(XMLText.escape(prefix))</Prefix>"
        inner += "<KeyCount>\(contents.count + prefixes.count)</KeyCount><MaxKeys>\(maximum)</MaxKeys>"
        if let delimiter { inner += "<Delimiter>\(XMLText.escape(delimiter))</Delimiter>" }
        inner += "<IsTruncated>\(truncated)</IsTruncated>"
        if let token = query["continuation-token"] {
            inner += "<ContinuationToken>\(XMLText.escape(token))</ContinuationToken>"
        }
        if truncated {
            inner += "<NextContinuationToken>\(Data(last.utf8).base64EncodedString())</NextContinuationToken>"
        }
        for (key, object) in contents {
            inner +=
                "<Contents><Key>\(XMLText.escape(key))</Key><LastModified>\(MockS3XML.time(object.modified))</LastModified>"
                + "<ETag>\(XMLText.escape(object.etag))</ETag><Size>\(object.content.size)</Size><StorageClass>STANDARD</StorageClass></Contents>"
        }
        for folded in prefixes {
            inner += "<CommonPrefixes><Prefix>\(XMLText.escape(folded))</Prefix></CommonPrefixes>"
        }
        return MockS3XML.answer("ListBucketResult", inner)
    }

    private func deleteObjects(_ bucket: String, body: Data) throws -> MockResponse {
        try requireBucket(bucket)
        guard let root = MockXMLElement.parse(body), root.name == "Delete" else {
            throw MockS3Error(400, "MalformedXML", "The XML you provided was not well-formed")
        }
        let keys = root.elements.filter { $0.name == "Object" }.compactMap { object in
            object.elements.first { $0.name == "Key" }.map { $0.rawText }
        }
        guard keys.count <= 1000 else { throw MockS3Error(400, "MalformedXML", "More than 1000 keys") }
        let quiet = root.elements.first { $0.name == "Quiet" }?.text == "true"
        state.withLock { state in for key in keys { state.buckets[bucket]?.removeValue(forKey: MockNameKey(key)) } }
        let deleted = quiet ? "" : keys.map { "<Deleted><Key>\(XMLText.escape($0))</Key></Deleted>" }.joined()
        return MockS3XML.answer("DeleteResult", deleted)
    }

    private func createUpload(_ bucket: String, _ key: String) -> MockResponse {
        let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        state.withLock { $0.uploads[id] = MockS3Upload(bucket: bucket, key: key) }
        return MockS3XML.answer(
            "InitiateMultipartUploadResult",
            "<Bucket>\(bucket)</Bucket><Key>\(XMLText.escape(key))</Key><UploadId>\(id)</UploadId>")
    }

    private func upload(_ query: [String: String], _ bucket: String, _ key: String) throws -> String {
        let id = query["uploadId"] ?? ""
        guard let upload = state.withLock({ $0.uploads[id] }), upload.bucket == bucket, upload.key == key else {
            throw MockS3Error(
                404, "NoSuchUpload",
                "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed."
            )
        }
        return id
    }

    private func uploadPart(
        _ request: IncomingRequest, _ bucket: String, _ key: String, body: Data
    ) throws
        -> MockResponse
    {
        let id = try upload(request.query, bucket, key)
        if server.faults.fires("no-such-upload", method: request.method, path: request.path) {
            state.withLock { _ = $0.uploads.removeValue(forKey: id) }
            throw MockS3Error(404, "NoSuchUpload", "The specified upload does not exist.")
        }
        guard let number = Int(request.query["partNumber"] ?? ""), (1...10_000).contains(number) else {
            throw MockS3Error(400, "InvalidArgument", "Part number must be an integer between 1 and 10000, inclusive")
        }
        try checkMD5(request, body)
        let content = try keep(body)
        let md5 = DigestStream(.md5)
        md5.update(body)
        let digest = md5.finalize()
        let etag = "\"" + SHA256.hexString(digest) + "\""
        state.withLock { $0.uploads[id]?.parts[number] = (content, etag, digest) }
        return MockResponse(status: 200, headers: ["ETag": etag])
    }

    private func listParts(_ bucket: String, _ key: String, _ query: [String: String]) throws -> MockResponse {
        let id = try upload(query, bucket, key)
        let marker = Int(query["part-number-marker"] ?? "0") ?? 0
        let maximum = min(1000, Int(query["max-parts"] ?? "1000") ?? 1000)
        let parts = state.withLock { ($0.uploads[id]?.parts ?? [:]) }.filter { $0.key > marker }.sorted {
            $0.key < $1.key
        }
        let page = parts.prefix(maximum)
        var inner = "<Bucket>\(bucket)</Bucket><Key>\(XMLText.escape(key))</Key><UploadId>\(id)</UploadId>"
        inner += "<PartNumberMarker>\(marker)</PartNumberMarker><MaxParts>\(maximum)</MaxParts>"
        inner += "<IsTruncated>\(parts.count > page.count)</IsTruncated>"
        if let last = page.last, parts.count > page.count {
            inner += "<NextPartNumberMarker>\(last.key)</NextPartNumberMarker>"
        }
        for (number, part) in page {
            inner +=
                "<Part><PartNumber>\(number)</PartNumber><LastModified>\(MockS3XML.time(Date()))</LastModified>"
                + "<ETag>\(part.etag)</ETag><Size>\(part.content.size)</Size></Part>"
        }
        return MockS3XML.answer("ListPartsResult", inner)
    }

    private func completeUpload(
        _ request: IncomingRequest, _ bucket: String, _ key: String, body: Data
    ) throws
        -> MockResponse
    {
        let id = try upload(request.query, bucket, key)
        guard let root = MockXMLElement.parse(body), root.name == "CompleteMultipartUpload" else {
            throw MockS3Error(400, "MalformedXML", "The XML you provided was not well-formed")
        }
        let named = root.elements.filter { $0.name == "Part" }.map { part in
            (
                Int(part.elements.first { $0.name == "PartNumber" }?.text ?? "") ?? 0,
                part.elements.first { $0.name == "ETag" }?.text ?? ""
            )
        }
        guard !named.isEmpty, zip(named, named.dropFirst()).allSatisfy({ $0.0 < $1.0 }) else {
            throw MockS3Error(400, "InvalidPartOrder", "The list of parts was not in ascending order.")
        }
        let held = state.withLock { $0.uploads[id]?.parts ?? [:] }
        var data = Data()
        var digests: [UInt8] = []
        for (index, (number, etag)) in named.enumerated() {
            guard let part = held[number],
                part.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    == etag.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            else {
                throw MockS3Error(
                    400, "InvalidPart",
                    "One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag."
                )
            }
            if index < named.count - 1, part.content.size < settings.minimumPartSize {
                throw MockS3Error(
                    400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
            }
            switch part.content {
            case .data(let bytes): data += bytes
            case .spooled(let url, _): data += (try? Data(contentsOf: url)) ?? Data()
            }
            digests += part.md5
        }
        let etag = "\"" + DigestStream.hex(Data(digests), .md5) + "-\(named.count)\""
        let content = try keep(data)
        try state.withLock { state in
            if request.headers["If-None-Match"] == "*", state.buckets[bucket]?[MockNameKey(key)] != nil {
                throw MockS3Error(
                    412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
            }
            state.buckets[bucket]?[MockNameKey(key)] = MockS3Object(content: content, etag: etag, modified: Date())
            state.uploads[id] = nil
        }
        return MockS3XML.answer(
            "CompleteMultipartUploadResult",
            "<Location>http://127.0.0.1/\(bucket)/\(XMLText.escape(key))</Location><Bucket>\(bucket)</Bucket>"
                + "<Key>\(XMLText.escape(key))</Key><ETag>\(XMLText.escape(etag))</ETag>")
    }
}

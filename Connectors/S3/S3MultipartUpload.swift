import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// A multipart upload on the shared resumable engine: CreateMultipartUpload opens it, each part is a PUT with its
/// number (its SHA-256 signed and its Content-MD5 sent, so S3 refuses a damaged part), ListParts says what the server
/// holds after a failure, CompleteMultipartUpload names every part by number and ETag. A completion may fail inside a
/// 200 (an `<Error>` body) and is then tried again; one whose answer was lost meets `NoSuchUpload`, and the object is
/// taken when its ETag is the MD5 of the parts' MD5s the upload sent. An upload given up is aborted.
struct S3MultipartUpload: ResumableUploadProtocol {
    let client: ServiceClient
    let configuration: S3Configuration
    let key: String
    let partSize: Int64
    let path: String

    struct Part: Sendable {
        var etag: String
        var size: Int64
        /// The part's MD5, when this process sent it (a part the listing reports is known by ETag alone).
        var md5: [UInt8]?
    }

    final class Session: Sendable {
        let uploadID: String
        let parts = Mutex<[Int: Part]>([:])
        init(uploadID: String) { self.uploadID = uploadID }

        /// Bytes held from 0 without a gap: whole parts 1, 2, … as the part size cuts them.
        func held(partSize: Int64, total: Int64) -> Int64 {
            parts.withLock { parts in
                var end: Int64 = 0
                var number = 1
                while let part = parts[number], part.size == min(partSize, total - end), part.size > 0 {
                    end += part.size
                    number += 1
                }
                return end
            }
        }
    }

    func pieceSize(of session: Session) -> Int64? { partSize }

    private func url(_ query: [(String, String)]) throws -> URL { try configuration.objectURL(key, query) }

    func open(size: Int64) async throws -> Session {
        // Opening twice only leaves an unused upload behind (a bucket's lifecycle rule, or `abandon`, clears those).
        var request = HTTPRequest(method: "POST", url: try url([("uploads", "")]), isSafeToRepeat: true)
        request.headers["Content-Type"] = "application/octet-stream"
        let response = try await client.checked(request, path: path)
        guard let id = (try? S3XMLElement.parse(response.body))?.value("UploadId"), !id.isEmpty else {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's answer to a multipart upload of \(path) has no UploadId")
        }
        return Session(uploadID: id)
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: Session
    ) async throws -> ResumableProgress<Void> {
        let number = Int(offset / partSize) + 1
        let data = try piece.data(offset: offset, length: length)
        let md5 = DigestStream(.md5)
        md5.update(data)
        let digest = md5.finalize()
        var request = HTTPRequest(
            method: "PUT",
            url: try url([("partNumber", String(number)), ("uploadId", session.uploadID)]), body: .data(data),
            isSafeToRepeat: false)
        request.maximumAttempts = 1
        request.headers["Content-MD5"] = Data(digest).base64EncodedString()
        let response = try await client.send(request)
        guard response.isSuccess else { return try client.sessionFailure(response, path: path) }
        guard let etag = response.headers["ETag"] else {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's answer to part \(number) of \(path) has no ETag")
        }
        if let returned = S3FileSystem.md5(ofETag: etag), returned != SHA256.hexString(digest) {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's ETag of part \(number) of \(path) is not the MD5 sent")
        }
        session.parts.withLock { $0[number] = Part(etag: etag, size: length, md5: digest) }
        return .received(session.held(partSize: partSize, total: total))
    }

    /// ListParts, page by page: the parts the server holds, by number, size and ETag.
    func status(of session: Session, total: Int64) async throws -> ResumableProgress<Void> {
        var marker: String?
        var listed: [Int: Part] = [:]
        let maximumParts = Int((total + partSize - 1) / partSize) + 1
        var pages = PageTokens("S3's parts of the upload of \(path)")
        repeat {
            var query = [("uploadId", session.uploadID), ("max-parts", "1000")]
            if let marker { query.append(("part-number-marker", marker)) }
            var request = HTTPRequest(url: try url(query))
            request.maximumAttempts = 1
            let response = try await client.send(request)
            guard response.isSuccess else { return try client.sessionFailure(response, path: path) }
            guard let root = try? S3XMLElement.parse(response.body), root.name == "ListPartsResult" else {
                throw CloudFileSystemError.server(
                    status: response.status, message: "S3's parts of the upload of \(path) are not the XML expected")
            }
            for part in root.all("Part") {
                guard let number = part.value("PartNumber").flatMap({ Int($0) }), let etag = part.value("ETag"),
                    let size = part.value("Size").flatMap({ Int64($0) })
                else { continue }
                listed[number] = Part(etag: etag, size: size, md5: nil)
            }
            guard listed.count <= maximumParts else {
                throw CloudFileSystemError.server(
                    status: response.status, message: "S3 lists more parts for \(path) than its size allows")
            }
            marker = try pages.next(
                root.value("IsTruncated") == "true" ? root.value("NextPartNumberMarker") : nil,
                items: root.all("Part").count)
        } while marker != nil
        session.parts.withLock { parts in
            // A part this process sent keeps its MD5 when the listing shows the same ETag.
            for (number, part) in listed {
                let known = parts[number]
                parts[number] = Part(
                    etag: part.etag, size: part.size, md5: known?.etag == part.etag ? known?.md5 : nil)
            }
            for number in parts.keys where listed[number] == nil { parts[number] = nil }
        }
        return .received(session.held(partSize: partSize, total: total))
    }

    func finish(_ session: Session, total: Int64) async throws -> ResumableProgress<Void> {
        let count = Int((total + partSize - 1) / partSize)
        let parts = session.parts.withLock { parts in (1...max(1, count)).compactMap { parts[$0] } }
        guard parts.count == max(1, count) else { return .received(session.held(partSize: partSize, total: total)) }
        let body = Data(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>"
                + parts.enumerated().map {
                    "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(XMLText.escape($0.element.etag))</ETag></Part>"
                }.joined() + "</CompleteMultipartUpload>").utf8)
        var request = HTTPRequest(
            method: "POST", url: try url([("uploadId", session.uploadID)]), body: .data(body), isSafeToRepeat: false)
        request.maximumAttempts = 1
        request.headers["Content-Type"] = "application/xml"
        let response = try await client.send(request)
        if let failure = S3ErrorBody.inSuccess(response) {
            throw CloudFileSystemError.transient(
                "S3 failed to complete the upload of \(path) after answering 200: \(failure.code) \(failure.message)")
        }
        if response.isSuccess {
            try check(etag: (try? S3XMLElement.parse(response.body))?.value("ETag"), parts: parts, status: 200)
            return .done(())
        }
        guard case .notFound = client.failure(of: response, path: path) else {
            return try client.sessionFailure(response, path: path)
        }
        // NoSuchUpload: completed by a request whose answer was lost, or expired. The object tells which.
        var head = HTTPRequest(method: "HEAD", url: try configuration.objectURL(key))
        head.isSafeToRepeat = true
        if let answer = try await client.answerIfPresent(head, path: path),
            answer.headers["Content-Length"].flatMap({ Int64($0) }) == total,
            let expected = Self.multipartETag(parts), answer.headers["ETag"].map(S3FileSystem.bare) == expected
        {
            return .done(())
        }
        return .expired
    }

    /// The ETag S3 gives a multipart object: the MD5 of the parts' MD5s, `-` and the part count; nil when a part's
    /// MD5 is not known here.
    static func multipartETag(_ parts: [Part]) -> String? {
        var all: [UInt8] = []
        for part in parts {
            guard let md5 = part.md5 else { return nil }
            all += md5
        }
        return DigestStream.hex(Data(all), .md5) + "-\(parts.count)"
    }

    /// An ETag of the multipart form is checked against the parts sent; a server that makes its ETags otherwise is
    /// taken at its word (the parts' MD5s were each checked).
    private func check(etag: String?, parts: [Part], status: Int) throws {
        guard let etag = etag.map(S3FileSystem.bare), etag.contains("-"), let expected = Self.multipartETag(parts)
        else {
            return
        }
        guard etag == expected else {
            throw CloudFileSystemError.server(
                status: status, message: "S3's ETag of \(path) is not the MD5 of the parts' MD5s sent")
        }
    }

    func abandon(_ session: Session) async {
        guard let url = try? url([("uploadId", session.uploadID)]) else { return }
        var request = HTTPRequest(method: "DELETE", url: url)
        request.maximumAttempts = 1
        _ = try? await client.send(request)
    }
}

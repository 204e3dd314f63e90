import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP
import LLVSSupport

/// Nextcloud's chunked upload v2: a large file goes up in numbered chunks to an upload collection, and the server
/// assembles it at its destination in one MOVE, so no request body is larger than a chunk (a reverse proxy's body
/// limit, often 1–100 MB, never blocks a large value) and readers never see part of the file.
extension WebDAVFileSystem {
    /// Sends `source` to `path` in chunks of `chunkSize` bytes: MKCOL of an upload collection naming its destination,
    /// a PUT per chunk (numbered from 1, each saying the whole length so a full quota is refused at the first), then
    /// the assembly `MOVE …/.file` with the whole file's SHA-1, which the server keeps. A 413 for a chunk means a
    /// proxy's limit is below the chunk size: the upload starts again with chunks half as large (down to 256 KiB).
    /// Anything else that fails removes the upload collection.
    func uploadInChunks(_ source: UploadSource, to path: String, layout: NextcloudLayout, checksum: String) async throws
    {
        var chunkSize = nextcloudChunkSize.load(ordering: .relaxed)
        while true {
            switch try await chunkedAttempt(source, to: path, layout: layout, checksum: checksum, chunkSize: chunkSize)
            {
            case .done:
                return
            case .chunkTooLarge where chunkSize > Self.smallestChunk:
                chunkSize = max(Self.smallestChunk, chunkSize / 2)
                nextcloudChunkSize.store(chunkSize, ordering: .relaxed)
            case .chunkTooLarge(let response):
                throw failure(response, path)
            }
        }
    }

    /// The smallest chunk a 413 halves the chunk size to.
    static let smallestChunk: Int64 = 256 * 1024

    private enum ChunkedOutcome {
        case done
        case chunkTooLarge(HTTPResponse)
    }

    private func chunkedAttempt(
        _ source: UploadSource, to path: String, layout: NextcloudLayout, checksum: String,
        chunkSize: Int64
    ) async throws -> ChunkedOutcome {
        let destination = try url(path, folder: false).absoluteString
        let upload = layout.uploadsURL.appendingPathComponent(
            "llvs-\(UUID.drawn().uuidString.lowercased())", isDirectory: true)
        var mkcol = request("MKCOL", upload)
        mkcol.headers["Destination"] = destination
        let made = try await send(mkcol)
        // The ID is this upload's alone: "already there" is this MKCOL repeated after its answer was lost.
        guard [.made, .taken].contains(WebDAVAnswer.mkcol(made)) else { throw failure(made, path) }
        do {
            var offset: Int64 = 0, number = 1
            while offset < source.size || number == 1 {
                let length = min(chunkSize, source.size - offset)
                var put = request(
                    "PUT", upload.appendingPathComponent(String(number)),
                    body: source.body(offset: offset, length: length))
                put.headers["Destination"] = destination
                put.headers["OC-Total-Length"] = String(source.size)
                put.isSafeToRepeat = true  // a chunk sent again replaces itself
                let response = try await send(put)
                if response.status == 413 {
                    await abandon(upload)
                    return .chunkTooLarge(response)
                }
                guard WebDAVAnswer.put(response) == .stored else { throw failure(response, path) }
                offset += length
                number += 1
            }
            try await assemble(upload, to: path, destination: destination, size: source.size, checksum: checksum)
            return .done
        } catch {
            await abandon(upload)
            throw error
        }
    }

    /// The assembly MOVE. The server may answer 423 while it merges (the client waits and asks again, as for any
    /// 423); an upload that is gone when asked again (404) was assembled if the destination now holds the file.
    private func assemble(
        _ upload: URL, to path: String, destination: String, size: Int64, checksum: String
    ) async throws {
        var move = request("MOVE", upload.appendingPathComponent(".file"))
        move.headers["Destination"] = destination
        move.headers["Overwrite"] = "T"
        move.headers["OC-Total-Length"] = String(size)
        move.headers["OC-Checksum"] = "SHA1:" + checksum
        move.isSafeToRepeat = true
        let response = try await send(move)
        switch WebDAVAnswer.move(response) {
        case .moved:
            break
        case .sourceGone:
            guard let item = try? await metadata(path), !item.isFolder, item.size == size else {
                throw failure(response, path)
            }
        case .failed:
            throw failure(response, path)
        }
        // What the server kept must be what was sent: its size, and the SHA-1 it lists for the file.
        let item = try await metadata(path)
        guard item.size == size else {
            throw CloudFileSystemError.server(
                status: response.status,
                message:
                    "the assembled \(path) holds \(item.size.map(String.init) ?? "an unknown number of") bytes, not the \(size) sent"
            )
        }
        if let listed = item.checksums[.sha1], !ChecksumAlgorithm.sha1.matches(listed, checksum) {
            throw CloudFileSystemError.server(
                status: response.status, message: "the assembled \(path) has SHA-1 \(listed), not the \(checksum) sent")
        }
    }

    /// Removes an upload collection that will not be assembled (the server would drop it after 24 hours anyway).
    private func abandon(_ upload: URL) async {
        _ = try? await send(request("DELETE", upload))
    }
}

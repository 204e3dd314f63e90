import Foundation
import LLVS
import LLVSSupport

/// Writes a sealed file as its plaintext arrives (a version's changes as they are encoded), so the plaintext is never
/// on disk. Whole batches of chunks are sealed as soon as more data follows them; the last chunk waits for
/// `finish()`, which seals it as the last.
final class SealingFileWriter: StagedFileWriter {
    private let file: LocalFile
    private let seal: FileSeal
    private var pending: [UInt8] = []
    private var sealedChunks: Int64 = 0
    private var buffer = [UInt8](repeating: 0, count: SealedFileCodec.batchChunks * SealedFileLayout.sealedChunkSize)
    private var finished = false
    private static let batchBytes = SealedFileCodec.batchChunks * SealedFileLayout.chunkSize

    init(url: URL, key: SecretKey, path: String) throws {
        file = try LocalFile(path: url.path, creating: true)
        seal = FileSeal.fresh(key: key, path: path)
        do {
            try seal.header.withUnsafeBytes { try file.write($0, at: 0) }
        } catch {
            file.close()
            throw error
        }
        pending.reserveCapacity(Self.batchBytes * 2)
    }

    deinit { if !finished { file.close() } }

    func write(_ data: Data) throws {
        pending.append(contentsOf: data)
        // Strictly more than a batch: the chunks sealed now are certainly not the last.
        while pending.count > Self.batchBytes {
            try sealPending(chunks: SealedFileCodec.batchChunks, total: Int64.max)
        }
    }

    func finish() throws {
        guard !finished else { return }
        let total = sealedChunks + SealedFileLayout.chunkCount(plain: Int64(pending.count))
        while sealedChunks < total {
            try sealPending(chunks: Int(min(Int64(SealedFileCodec.batchChunks), total - sealedChunks)), total: total)
        }
        finished = true
        file.close()
    }

    /// Seals the first `chunks` chunks of what is pending and writes them after what is already written.
    private func sealPending(chunks: Int, total: Int64) throws {
        let plainCount = min(chunks * SealedFileLayout.chunkSize, pending.count)
        let sealedCount = plainCount + chunks * SealedFileLayout.tagSize
        let first = sealedChunks
        pending.withUnsafeBytes { plain in
            buffer.withUnsafeMutableBytes { out in
                SealedFileCodec.sealChunks(
                    seal, first: first, count: chunks, total: total,
                    plain: UnsafeRawBufferPointer(rebasing: plain[0..<plainCount]),
                    plainOffset: first * Int64(SealedFileLayout.chunkSize), out: out.baseAddress!)
            }
        }
        try buffer.withUnsafeBytes { out in
            try file.write(
                UnsafeRawBufferPointer(rebasing: out[0..<sealedCount]),
                at: Int64(SealedFileLayout.headerSize) + first * Int64(SealedFileLayout.sealedChunkSize))
        }
        pending.removeFirst(plainCount)
        sealedChunks += Int64(chunks)
    }
}

import Foundation
import LLVSSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Seals and opens whole files in the `SealedFileLayout`, in memory or from file to file. File to file works in
/// batches of chunks, so memory stays a few MiB whatever the size, and each batch's chunks are sealed on every core.
enum SealedFileCodec {
    /// Chunks handled together: 4 MiB of plaintext.
    static let batchChunks = 64

    // MARK: In memory

    static func seal(_ data: Data, key: SecretKey, path: String) -> Data {
        let seal = FileSeal.fresh(key: key, path: path)
        let plainCount = Int64(data.count)
        let chunks = SealedFileLayout.chunkCount(plain: plainCount)
        var out = Data(count: Int(SealedFileLayout.sealedSize(plain: plainCount)))
        out.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            seal.header.withUnsafeBytes { out.copyMemory(from: $0) }
            data.withUnsafeBytes { (plain: UnsafeRawBufferPointer) in
                sealChunks(
                    seal, first: 0, count: Int(chunks), total: chunks, plain: plain, plainOffset: 0,
                    out: out.baseAddress! + SealedFileLayout.headerSize)
            }
        }
        return out
    }

    /// The plaintext of a whole sealed file; `damaged` naming `displayPath` when anything fails its check.
    static func open(_ sealed: Data, key: SecretKey, path: String, displayPath: String) throws -> Data {
        guard let plainCount = SealedFileLayout.plainSize(sealed: Int64(sealed.count)) else {
            throw EncryptionError.damaged(
                path: displayPath, reason: "its size, \(sealed.count) bytes, is not that of an encrypted file")
        }
        let seal = try readHeader(
            sealed.prefix(SealedFileLayout.headerSize), key: key, path: path, displayPath: displayPath)
        let chunks = SealedFileLayout.chunkCount(plain: plainCount)
        var out = Data(count: Int(plainCount))
        try out.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            try sealed.withUnsafeBytes { (sealed: UnsafeRawBufferPointer) in
                try openChunks(
                    seal, first: 0, count: Int(chunks), total: chunks, plainCount: plainCount,
                    sealed: UnsafeRawBufferPointer(rebasing: sealed[SealedFileLayout.headerSize...]),
                    out: out.baseAddress, displayPath: displayPath)
            }
        }
        return out
    }

    /// Whether a file of `sealedCount` bytes starting with `prefix` (its header and at least its first chunk, or the
    /// whole file) was sealed under `path`: its first chunk opens. Nothing is written anywhere.
    static func firstChunkOpens(_ prefix: Data, sealedCount: Int64, key: SecretKey, path: String) -> Bool {
        guard let plainCount = SealedFileLayout.plainSize(sealed: sealedCount),
            let seal = try? readHeader(
                prefix.prefix(SealedFileLayout.headerSize), key: key, path: path, displayPath: path)
        else { return false }
        let length = Int(min(Int64(SealedFileLayout.chunkSize), plainCount)) + SealedFileLayout.tagSize
        let chunk = prefix.dropFirst(SealedFileLayout.headerSize).prefix(length)
        guard chunk.count == length else { return false }
        var scratch = [UInt8](repeating: 0, count: length)
        return Data(chunk).withUnsafeBytes { sealed in
            scratch.withUnsafeMutableBytes { out in
                seal.open(
                    chunk: 0, isLast: SealedFileLayout.chunkCount(plain: plainCount) == 1, sealed, into: out.baseAddress
                )
            }
        }
    }

    /// The seal a file's header names; `damaged` when it is not one this layout writes.
    static func readHeader(_ header: Data, key: SecretKey, path: String, displayPath: String) throws -> FileSeal {
        guard header.count == SealedFileLayout.headerSize, header.prefix(8).elementsEqual(SealedFileLayout.magic) else {
            throw EncryptionError.damaged(path: displayPath, reason: "it does not start as an encrypted file does")
        }
        return FileSeal(key: key, fileNonce: Array(header.suffix(SealedFileLayout.fileNonceSize)), path: path)
    }

    // MARK: Chunks

    /// Seals chunks `first..<first+count` of a file of `total` chunks; `plain` holds the plaintext from `plainOffset`.
    static func sealChunks(
        _ seal: FileSeal, first: Int64, count: Int, total: Int64, plain: UnsafeRawBufferPointer,
        plainOffset: Int64, out: UnsafeMutableRawPointer
    ) {
        let work = { (i: Int) in
            let index = first + Int64(i)
            let start = Int(index * Int64(SealedFileLayout.chunkSize) - plainOffset)
            let end = min(start + SealedFileLayout.chunkSize, plain.count)
            seal.seal(
                chunk: index, isLast: index == total - 1, UnsafeRawBufferPointer(rebasing: plain[start..<end]),
                into: out + i * SealedFileLayout.sealedChunkSize)
        }
        eachChunk(count, work)
    }

    /// Opens chunks `first..<first+count` of a file of `total` chunks and `plainCount` bytes; `sealed` starts at
    /// chunk `first`, `out` receives the plaintext from chunk `first` on.
    static func openChunks(
        _ seal: FileSeal, first: Int64, count: Int, total: Int64, plainCount: Int64,
        sealed: UnsafeRawBufferPointer, out: UnsafeMutableRawPointer?, displayPath: String
    ) throws {
        let failures = Mutex<Int64?>(nil)
        let work = { (i: Int) in
            let index = first + Int64(i)
            let plainStart = index * Int64(SealedFileLayout.chunkSize)
            let plainLength = Int(min(Int64(SealedFileLayout.chunkSize), plainCount - plainStart))
            let start = i * SealedFileLayout.sealedChunkSize
            let chunk = UnsafeRawBufferPointer(rebasing: sealed[start..<start + plainLength + SealedFileLayout.tagSize])
            let target = plainLength == 0 ? nil : out.map { $0 + i * SealedFileLayout.chunkSize }
            if !seal.open(chunk: index, isLast: index == total - 1, chunk, into: target) {
                failures.withLock { $0 = min($0 ?? index, index) }
            }
        }
        eachChunk(count, work)
        if let failed = failures.withLock({ $0 }) {
            throw EncryptionError.damaged(
                path: displayPath, reason: "chunk \(failed) of \(total) does not authenticate")
        }
    }

    // MARK: File to file

    /// Opens the sealed local file at `url` where it is, first batch to last, then cuts it to the plaintext's size:
    /// plaintext lands at or before the sealed bytes it came from, so nothing still to be read is overwritten. On
    /// any failure the file is removed, so nothing unchecked is left where the caller looks.
    static func openInPlace(_ url: URL, key: SecretKey, path: String, displayPath: String) throws {
        do {
            let file = try LocalFile(path: url.path, creating: false)
            defer { file.close() }
            let sealedCount = try file.size()
            guard let plainCount = SealedFileLayout.plainSize(sealed: sealedCount) else {
                throw EncryptionError.damaged(
                    path: displayPath, reason: "its size, \(sealedCount) bytes, is not that of an encrypted file")
            }
            let seal = try readHeader(
                try file.read(at: 0, count: SealedFileLayout.headerSize), key: key, path: path, displayPath: displayPath
            )
            let total = SealedFileLayout.chunkCount(plain: plainCount)
            var buffer = [UInt8](repeating: 0, count: batchChunks * SealedFileLayout.chunkSize)
            var first: Int64 = 0
            while first < total {
                let count = Int(min(Int64(batchChunks), total - first))
                let plainOffset = first * Int64(SealedFileLayout.chunkSize)
                let plainLength = Int(min(Int64(count * SealedFileLayout.chunkSize), plainCount - plainOffset))
                let sealed = try file.read(
                    at: Int64(SealedFileLayout.headerSize) + first * Int64(SealedFileLayout.sealedChunkSize),
                    count: plainLength + count * SealedFileLayout.tagSize)
                try sealed.withUnsafeBytes { sealed in
                    try buffer.withUnsafeMutableBytes { out in
                        try openChunks(
                            seal, first: first, count: count, total: total, plainCount: plainCount, sealed: sealed,
                            out: out.baseAddress, displayPath: displayPath)
                    }
                }
                try buffer.withUnsafeBytes {
                    try file.write(UnsafeRawBufferPointer(rebasing: $0[0..<plainLength]), at: plainOffset)
                }
                first += Int64(count)
            }
            try file.resize(plainCount)
        } catch {
            unlink(url.path)
            throw error
        }
    }
}

/// Runs `work` for `0..<count`, on every core when there is enough of it.
private func eachChunk(_ count: Int, _ work: (Int) -> Void) {
    guard count >= 8 else { (0..<count).forEach(work); return }
    withoutActuallyEscaping(work) { work in
        // Each call reads and writes only its own chunk's bytes of the caller's buffers, and the caller waits for all
        // of them, so sharing the closure (and the pointers it holds) across threads is safe.
        nonisolated(unsafe) let work = work
        DispatchQueue.concurrentPerform(iterations: count) { work($0) }
    }
}

/// A local file read and written at offsets: one this process makes (refusing one already there), or one it opens
/// to open in place.
struct LocalFile {
    let path: String
    private let fd: Int32

    init(path: String, creating: Bool) throws {
        self.path = path
        fd =
            creating
            ? Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) : Glibc.open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw POSIX.fail(path, creating ? "create" : "open") }
    }

    func size() throws -> Int64 {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw POSIX.fail(path, "inspect") }
        return Int64(info.st_size)
    }

    func resize(_ size: Int64) throws {
        guard ftruncate(fd, off_t(size)) == 0 else { throw POSIX.fail(path, "resize") }
    }

    func read(at offset: Int64, count: Int) throws -> Data { try POSIX.read(count, at: offset, from: fd, path: path) }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        try POSIX.write(bytes, at: offset, to: fd, path: path)
    }

    func close() { Glibc.close(fd) }
}

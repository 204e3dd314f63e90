import Foundation

/// How one file of an encrypted remote is laid out (docs/encryption.md):
///
///     "LLVSENC1" (8 bytes) · file nonce (16 random bytes) · chunk 0 · chunk 1 · … · chunk n-1
///
/// Each chunk is up to 64 KiB of the plaintext sealed with XChaCha20-Poly1305 under the remote's key, so it is 16
/// bytes longer. Chunk i's nonce is the file nonce followed by i (64-bit little-endian); its additional data is a
/// domain string, a byte saying whether it is the last chunk, and the file's path below the encrypted folder. So a
/// chunk moved within the file, a file cut at a chunk boundary, and a file put in another's place all fail to
/// open, while chunks stay independent: any range can be read, and large files seal on every core.
public enum SealedFileLayout {
    public static let magic: [UInt8] = Array("LLVSENC1".utf8)
    static let fileNonceSize = 16
    public static let headerSize = 8 + 16
    public static let chunkSize = 64 * 1024
    public static let tagSize = 16
    public static let sealedChunkSize = chunkSize + tagSize

    /// Chunks of a file of `plain` bytes: at least one, so an empty file still proves it ends.
    static func chunkCount(plain: Int64) -> Int64 {
        max(1, (plain + Int64(chunkSize) - 1) / Int64(chunkSize))
    }

    /// The size on the remote of a file of `plain` bytes.
    public static func sealedSize(plain: Int64) -> Int64 {
        Int64(headerSize) + plain + chunkCount(plain: plain) * Int64(tagSize)
    }

    /// The plaintext size of a file of `sealed` bytes on the remote; nil when no file this layout writes has that size.
    public static func plainSize(sealed: Int64) -> Int64? {
        let body = sealed - Int64(headerSize)
        guard body >= Int64(tagSize) else { return nil }
        let chunks = (body + Int64(sealedChunkSize) - 1) / Int64(sealedChunkSize)
        let last = body - (chunks - 1) * Int64(sealedChunkSize)
        guard last >= Int64(tagSize), chunks == 1 || last > Int64(tagSize) else { return nil }
        return body - chunks * Int64(tagSize)
    }
}

/// The seal of one file: the remote's key, the file's nonce and its path. Sealing and opening a chunk touch nothing
/// shared, so many run at once.
struct FileSeal: Sendable {
    let key: SecretKey
    let fileNonce: [UInt8]
    /// The additional data of a middle chunk and of the last one.
    private let middle: [UInt8]
    private let last: [UInt8]

    static let domain = Array("llvs-encrypted-file-v1".utf8) + [0]

    init(key: SecretKey, fileNonce: [UInt8], path: String) {
        precondition(fileNonce.count == SealedFileLayout.fileNonceSize)
        self.key = key
        self.fileNonce = fileNonce
        middle = Self.domain + [0] + Array(path.utf8)
        last = Self.domain + [1] + Array(path.utf8)
    }

    /// A new file's seal, with a fresh random nonce.
    static func fresh(key: SecretKey, path: String) -> FileSeal {
        FileSeal(key: key, fileNonce: Sodium.randomBytes(SealedFileLayout.fileNonceSize), path: path)
    }

    var header: [UInt8] { SealedFileLayout.magic + fileNonce }

    private func nonce(_ index: Int64) -> [UInt8] {
        var nonce = fileNonce
        withUnsafeBytes(of: UInt64(index).littleEndian) { nonce.append(contentsOf: $0) }
        return nonce
    }

    func seal(chunk index: Int64, isLast: Bool, _ plain: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) {
        let nonce = nonce(index)
        (isLast ? last : middle).withUnsafeBytes { additional in
            key.bytes.withUnsafeBytes { key in
                Sodium.seal(
                    plain.baseAddress, plain.count, into: out, additional: additional, nonce: nonce,
                    key: key.baseAddress!)
            }
        }
    }

    func open(
        chunk index: Int64, isLast: Bool, _ sealed: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer?
    ) -> Bool {
        let nonce = nonce(index)
        return (isLast ? last : middle).withUnsafeBytes { additional in
            key.bytes.withUnsafeBytes { key in
                Sodium.open(
                    sealed.baseAddress!, sealed.count, into: out, additional: additional, nonce: nonce,
                    key: key.baseAddress!)
            }
        }
    }
}

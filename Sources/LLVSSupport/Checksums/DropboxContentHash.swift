import Foundation

/// Dropbox's `content_hash` (the checksum Dropbox reports for every file and checks on upload): the data is cut into
/// 4 MiB blocks (the last may be shorter), each block's SHA-256 is taken, and the SHA-256 of those digests one after
/// another is the hash, in hex. An empty file has no blocks, so its hash is the SHA-256 of nothing. Here rather than
/// in the connector so that the Dropbox mock, which may not import a connector, computes the same value.
public final class DropboxContentHash {
    public static let blockSize = 4 * 1024 * 1024
    private var block = DigestStream(.sha256)
    private var inBlock = 0
    private let overall = DigestStream(.sha256)

    public init() {}

    public func update(_ data: Data) {
        var offset = data.startIndex
        while offset < data.endIndex {
            let take = min(Self.blockSize - inBlock, data.endIndex - offset)
            block.update(data[offset..<offset + take])
            inBlock += take
            offset += take
            if inBlock == Self.blockSize { endBlock() }
        }
    }

    private func endBlock() {
        overall.update(Data(block.finalize()))
        block = DigestStream(.sha256)
        inBlock = 0
    }

    /// The hash in lowercase hex; the hash is finished after this.
    public func finalizeHex() -> String {
        if inBlock > 0 { endBlock() }
        return overall.finalizeHex()
    }
}

import Foundation

/// The checksums cloud services report for stored files. A connector declares which one its service computes
/// (`CloudCapabilities.checksums`), so the conformance suite and callers can verify every upload whatever the
/// algorithm, instead of trusting a size.
public enum ChecksumAlgorithm: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    case sha256
    case sha1
    case md5
    /// OneDrive's QuickXorHash, reported in base64 (not hex).
    case quickXor
    /// Dropbox's `content_hash`: SHA-256 over the SHA-256 of each 4 MiB block, in hex.
    case dropboxContentHash

    public var description: String {
        switch self {
        case .sha256: "SHA-256"
        case .sha1: "SHA-1"
        case .md5: "MD5"
        case .quickXor: "QuickXorHash"
        case .dropboxContentHash: "Dropbox content hash"
        }
    }

    /// The digest of `data` in the text form services report: lowercase hex, or base64 for QuickXorHash.
    public func text(of data: Data) -> String {
        let stream = ChecksumStream(self)
        stream.update(data)
        return stream.finalize()
    }

    /// The digest of `data` in base64 (Box's `Digest: sha=` header); for QuickXorHash the same as `text(of:)`.
    public func base64(of data: Data) -> String {
        let text = text(of: data)
        return self == .quickXor ? text : Self.base64(hex: text) ?? ""
    }

    /// Hex digits as base64 of the bytes they spell; nil when the text is not hex.
    public static func base64(hex: String) -> String? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.count / 2)
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return Data(bytes).base64EncodedString()
    }

    /// Whether a service's value equals ours. Hex is compared without regard to case; base64 exactly.
    public func matches(_ reported: String, _ computed: String) -> Bool {
        self == .quickXor ? reported == computed : reported.lowercased() == computed.lowercased()
    }
}

/// Any of the checksums fed data in pieces, so a file is hashed as it streams and never held whole. SHA-256,
/// SHA-1 and MD5 are libcrypto's; QuickXorHash is Microsoft's own and libcrypto has none.
public final class ChecksumStream {
    public let algorithm: ChecksumAlgorithm
    private enum Engine {
        case digest(DigestStream)
        case quickXor(QuickXorHash)
        case dropbox(DropboxContentHash)
    }
    private let engine: Engine

    public init(_ algorithm: ChecksumAlgorithm) {
        self.algorithm = algorithm
        switch algorithm {
        case .sha256: engine = .digest(DigestStream(.sha256))
        case .sha1: engine = .digest(DigestStream(.sha1))
        case .md5: engine = .digest(DigestStream(.md5))
        case .quickXor: engine = .quickXor(QuickXorHash())
        case .dropboxContentHash: engine = .dropbox(DropboxContentHash())
        }
    }

    public func update(_ data: Data) {
        switch engine {
        case .digest(let stream): stream.update(data)
        case .quickXor(let hash): hash.update(data)
        case .dropbox(let hash): hash.update(data)
        }
    }

    /// The checksum in the service's text form; the stream is finished after this.
    public func finalize() -> String {
        switch engine {
        case .digest(let stream): stream.finalizeHex()
        case .quickXor(let hash): Data(hash.finalize()).base64EncodedString()
        case .dropbox(let hash): hash.finalizeHex()
        }
    }

    /// The checksum of a local file, read in 1 MiB pieces.
    public static func text(ofFileAt url: URL, _ algorithm: ChecksumAlgorithm) throws -> String {
        let stream = ChecksumStream(algorithm)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty { stream.update(piece) }
        return stream.finalize()
    }
}

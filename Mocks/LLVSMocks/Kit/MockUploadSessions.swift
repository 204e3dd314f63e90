import Foundation
import LLVSHTTP

/// One upload session of a mock: its bytes spooled to disk as they arrive, at the offsets the client names.
/// Drive and OneDrive append in order; Box parts and pCloud writes may come at any offset.
public struct MockUploadSession<Target: Sendable>: Sendable {
    public var id: String
    public var target: Target
    public var total: Int64?
    /// Bytes `0 ..< received` are held without a gap.
    public var received: Int64 = 0
    public var spool: URL
    /// Every body byte sent, repeats included (what a test of resuming looks at).
    public var bytesSent: Int64 = 0
    public var expired = false
    /// The item the session made, once it has; a later request is answered with it.
    public var finishedID: String?
    /// Extents written out of order, merged into `received` once the gap before them fills.
    var extents: [Range<Int64>] = []

    /// Writes a body at `offset`. Bytes already held are skipped, so a piece sent twice changes nothing.
    public mutating func write(_ body: IncomingRequest.Body, at offset: Int64) throws {
        let length: Int64
        switch body {
        case .data(let data): length = Int64(data.count)
        case .file(_, let size): length = size
        }
        bytesSent += length
        guard length > 0 else { return }
        let handle = try FileHandle(forWritingTo: spool)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        switch body {
        case .data(let data):
            try handle.write(contentsOf: data)
        case .file(let url, _):
            let reader = try FileHandle(forReadingFrom: url)
            defer { try? reader.close() }
            while let piece = try reader.read(upToCount: 1 << 20), !piece.isEmpty {
                try handle.write(contentsOf: piece)
            }
        }
        extents.append(offset..<(offset + length))
        extents.sort { $0.lowerBound < $1.lowerBound }
        var remaining: [Range<Int64>] = []
        for extent in extents {
            if extent.lowerBound <= received {
                received = max(received, extent.upperBound)
            } else {
                remaining.append(extent)
            }
        }
        extents = remaining
    }

    /// What the session holds, as stored contents: small in memory (the spool removed), large left spooled.
    public func content(total: Int64) -> MockContent {
        guard total > 1 << 20 else {
            let data = (try? Data(contentsOf: spool)).map { $0.prefix(Int(total)) } ?? Data()
            try? FileManager.default.removeItem(at: spool)
            return .data(Data(data))
        }
        return .spooled(spool, size: total)
    }
}

/// The upload sessions of a mock, with the faults tests need: every session expiring now, or after so many pieces.
public struct MockUploadSessions<Target: Sendable>: Sendable {
    public private(set) var sessions: [String: MockUploadSession<Target>] = [:]
    /// Pieces to store before every session expires (nil: never).
    public var piecesUntilExpiry: Int?

    public init() {}

    /// A new session spooling into `directory`.
    public mutating func open(
        _ target: Target, total: Int64?, in directory: URL, id: String = UUID().uuidString
    ) -> MockUploadSession<Target> {
        let spool = directory.appendingPathComponent("session-\(id)")
        // A spool that cannot be made fails the session's first write, which opens it.
        _ = FileManager.default.createFile(atPath: spool.path, contents: nil)
        let session = MockUploadSession(id: id, target: target, total: total, spool: spool)
        sessions[id] = session
        return session
    }

    public subscript(id: String) -> MockUploadSession<Target>? {
        get { sessions[id] }
        set { sessions[id] = newValue }
    }

    public mutating func expireAll() {
        for key in sessions.keys { sessions[key]?.expired = true }
    }

    /// Counts a stored piece towards a planned expiry.
    public mutating func pieceStored() {
        guard let remaining = piecesUntilExpiry else { return }
        if remaining <= 1 {
            piecesUntilExpiry = nil
            expireAll()
        } else {
            piecesUntilExpiry = remaining - 1
        }
    }

    public var bytesSent: [Int64] { sessions.values.map(\.bytesSent) }
}

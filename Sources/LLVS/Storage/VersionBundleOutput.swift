import Foundation
import LLVSSupport

/// Where a `FileVersionWriter` puts a version's bundle: its own file (a single save, made durable alone), or a
/// buffer whose bundle is appended to the group's pack at commit (a bulk receive, `FileStorage+Grouping`).
enum VersionBundleOutput {
    case file(AtomicFileWriter)
    case grouped(SpillingBundle)

    var bytesWritten: Int64 {
        switch self {
        case .file(let file): file.bytesWritten
        case .grouped(let bundle): bundle.bytesWritten
        }
    }

    func write(_ data: Data) throws {
        switch self {
        case .file(let file): try file.write(data)
        case .grouped(let bundle): try bundle.write(data)
        }
    }

    func write(_ bytes: [UInt8]) throws {
        switch self {
        case .file(let file): try file.write(bytes)
        case .grouped(let bundle): try bundle.write(bytes)
        }
    }

    func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
        switch self {
        case .file(let file): try file.overwrite(bytes, at: offset)
        case .grouped(let bundle): try bundle.overwrite(bytes, at: offset)
        }
    }

    func discard() {
        switch self {
        case .file(let file): file.discard()
        case .grouped(let bundle): bundle.discard()
        }
    }
}

/// A version's bundle held in memory, moved to the version's own temporary file once it passes `memoryLimit` (a
/// version with large values), so memory stays bounded whatever is received. A spilled bundle becomes a version
/// file of its own rather than being copied into the group's pack: its bytes are written once.
final class SpillingBundle {
    /// Where the version's own file goes if the bundle spills.
    private let destination: String
    private var bytes: [UInt8] = []
    private(set) var spill: AtomicFileWriter?
    private(set) var bytesWritten: Int64 = 0
    static let memoryLimit = 4 << 20

    init(destination: String) { self.destination = destination }

    func write(_ data: Data) throws {
        try makeRoom(for: data.count)
        if let spill { try spill.write(data) } else { bytes.append(contentsOf: data) }
        bytesWritten += Int64(data.count)
    }

    func write(_ piece: [UInt8]) throws {
        try makeRoom(for: piece.count)
        if let spill { try spill.write(piece) } else { bytes.append(contentsOf: piece) }
        bytesWritten += Int64(piece.count)
    }

    func overwrite(_ piece: [UInt8], at offset: Int64) throws {
        if let spill { return try spill.overwrite(piece, at: offset) }
        bytes.replaceSubrange(Int(offset)..<(Int(offset) + piece.count), with: piece)
    }

    /// Moves what is held to the version's temporary file when `count` more bytes would pass the limit.
    private func makeRoom(for count: Int) throws {
        guard spill == nil, bytes.count + count > Self.memoryLimit else { return }
        try POSIX.makeDirectories(POSIX.folderAndName(destination).folder)
        let file = try AtomicFileWriter(destination: destination)
        try file.write(bytes)
        bytes = []
        spill = file
    }

    /// The bundle held in memory (when it did not spill).
    var heldBytes: [UInt8] { bytes }

    func discard() {
        spill?.discard()
        bytes = []
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Cuts a file into chunks at points chosen by its content (FastCDC: a gear rolling hash with normalized chunking),
/// so an edit moves only the cut points around it: the chunks before and after are the same bytes as before, and
/// are stored and sent once. Sizes: at least `minimumSize` (but for the file's last chunk), about `averageSize`,
/// at most `maximumSize`.
///
/// The gear table and masks are part of the backup format: every store must cut the same file the same way, or
/// equal data would stop deduplicating across stores. They must never change.
public struct ContentDefinedChunker: Sendable {
    public static let minimumSize = 512 << 10
    public static let averageSize = 1 << 20
    public static let maximumSize = 4 << 20

    /// Harder to match below the average size, easier above it (FastCDC's normalization, level 2): sizes cluster
    /// around the average instead of spreading geometrically. Top bits of the hash, which depend on its last 64 bytes.
    static let maskBelowAverage: UInt64 = ~0 << (64 - 22)
    static let maskAboveAverage: UInt64 = ~0 << (64 - 18)

    /// 256 pseudo-random words from SplitMix64 with a fixed seed.
    static let gear: [UInt64] = {
        var state: UInt64 = 0x4C4C_5653_4344_4331  // "LLVSCDC1"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()

    public init() {}

    /// The length of the next chunk of `bytes`, which hold the rest of the file when `isEnd`, or at least
    /// `maximumSize` bytes otherwise.
    public func cut(_ bytes: UnsafeRawBufferPointer, isEnd: Bool) -> Int {
        let count = bytes.count
        precondition(isEnd || count >= Self.maximumSize, "a cut needs the rest of the file or a whole maximum chunk")
        if count <= Self.minimumSize { return count }
        let end = min(count, Self.maximumSize)
        let normal = min(Self.averageSize, end)
        return Self.gear.withUnsafeBufferPointer { gear -> Int in
            let p = bytes.bindMemory(to: UInt8.self).baseAddress!
            var hash: UInt64 = 0
            var index = Self.minimumSize
            while index < normal {
                hash = (hash << 1) &+ gear[Int(p[index])]
                index += 1
                if hash & Self.maskBelowAverage == 0 { return index }
            }
            while index < end {
                hash = (hash << 1) &+ gear[Int(p[index])]
                index += 1
                if hash & Self.maskAboveAverage == 0 { return index }
            }
            return end
        }
    }

    /// Reads an open file to its end and gives each chunk to `body` (valid only during the call).
    public func chunks(ofDescriptor fd: Int32, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = FileChunkReader(fd: fd, chunker: self)
        while try reader.next(body) {}
    }
}

/// Cuts an open file into chunks one at a time, as the caller asks for them (so it may pause between two, to commit).
/// Memory: two maximum chunks, whatever the file's size.
public final class FileChunkReader {
    let fd: Int32
    let chunker: ContentDefinedChunker
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0, end = 0, atEnd = false

    public init(fd: Int32, chunker: ContentDefinedChunker = ContentDefinedChunker()) {
        self.fd = fd
        self.chunker = chunker
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * ContentDefinedChunker.maximumSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Gives the next chunk to `body` (valid only during the call); false, without calling it, at the end.
    public func next(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        if !atEnd && end - start < ContentDefinedChunker.maximumSize {
            if start > 0 {
                if end > start { memmove(buffer.baseAddress!, buffer.baseAddress! + start, end - start) }
                end -= start
                start = 0
            }
            while end < buffer.count {
                let got = read(fd, buffer.baseAddress! + end, buffer.count - end)
                if got < 0 {
                    if errno == EINTR { continue }
                    throw BackupError.readFailed(errno: errno)
                }
                if got == 0 { atEnd = true; break }
                end += got
            }
        }
        if start == end { return false }
        let available = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
        let length = chunker.cut(available, isEnd: atEnd)
        try body(UnsafeRawBufferPointer(rebasing: available[0..<length]))
        start += length
        return true
    }
}

import LLVSSupport
/// Why an LZFSE stream could not be decoded, as cases a caller can switch on. `offset` is the byte offset in the
/// stream where the problem was found.
public enum LZFSEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The stream ends before its end-of-stream marker (`bvx$`) or inside a block.
    case truncated(offset: Int)
    /// A block starts with bytes that are not one of LZFSE's block magics.
    case unknownBlock(offset: Int, magic: UInt32)
    /// A block's header or payload breaks the format's rules (a table over its state count, a match reaching
    /// before the start of the output, a block that decodes to another size than it declares, …).
    case corrupt(offset: Int, reason: String)
    /// The stream would decode to more than the caller allows.
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .truncated(let offset): "the LZFSE stream is truncated (at byte \(offset))"
        case .unknownBlock(let offset, let magic):
            "no LZFSE block starts at byte \(offset) (magic 0x\(String(magic, radix: 16)))"
        case .corrupt(let offset, let reason): "the LZFSE block at byte \(offset) is corrupt: \(reason)"
        case .tooLarge(let limit): "the LZFSE stream decodes to more than \(limit) bytes"
        }
    }
}

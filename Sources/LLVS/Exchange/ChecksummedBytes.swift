import Foundation
import LLVSSupport

/// The framing of the small binary files this package keeps beside others (an index of a changes file, the list of
/// a snapshot's released records): a magic first, the CRC-32 of every byte before it last, so a cut or damaged file
/// is refused by name, never misread.
enum ChecksummedBytes {
    /// Appends the CRC-32 of everything `writer` holds (which starts with the magic).
    static func seal(_ writer: inout ByteWriter) {
        var crc = CRC32.Running()
        crc.update(Data(writer.bytes))
        writer.uint32(crc.value)
    }

    /// A reader over what lies between `magic` and the checksum, once both are found right; `what` says what the
    /// file should be, `path` names it (`ExchangeError.malformedFile`).
    static func body(of data: Data, magic: Data, what: String, path: String) throws -> ByteReader {
        guard data.count >= magic.count + 4, data.prefix(magic.count) == magic else {
            let name = String(decoding: magic, as: UTF8.self)
            throw ExchangeError.malformedFile(path: path, reason: "it is not \(what) (no \(name) at its start)")
        }
        var crc = CRC32.Running()
        crc.update(data.dropLast(4))
        var trailer = ByteReader(data.suffix(4))
        guard (try? trailer.uint32()) == crc.value else {
            throw ExchangeError.malformedFile(path: path, reason: "checksum mismatch")
        }
        return ByteReader(data.dropLast(4).dropFirst(magic.count))
    }
}

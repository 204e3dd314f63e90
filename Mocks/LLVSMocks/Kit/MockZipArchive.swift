import Foundation
import LLVSCodecs
import LLVSSupport

/// A small zip archive writer for mocks that hand out archives (pCloud's `getzip`): entries stored without
/// compression, UTF-8 names, no ZIP64, so anything a mock serves this way stays under 4 GiB.
enum MockZipArchive {
    static func stored(_ entries: [(name: String, data: Data)]) -> Data {
        var archive = Data()
        var central = Data()
        for (name, data) in entries {
            let nameBytes = Data(name.utf8)
            let crc = CRC32.checksum(data)
            let offset = UInt32(archive.count)
            archive.append(le32(0x0403_4b50))
            // Version, UTF-8 names, stored.
            archive.append(le16(20)); archive.append(le16(0x0800)); archive.append(le16(0))
            archive.append(le16(0)); archive.append(le16(0x21))  // 1980-01-01 00:00
            archive.append(le32(crc)); archive.append(le32(UInt32(data.count)));
            archive.append(le32(UInt32(data.count)))
            archive.append(le16(UInt16(nameBytes.count))); archive.append(le16(0))
            archive.append(nameBytes)
            archive.append(data)

            central.append(le32(0x0201_4b50))
            central.append(le16(20)); central.append(le16(20)); central.append(le16(0x0800)); central.append(le16(0))
            central.append(le16(0)); central.append(le16(0x21))
            central.append(le32(crc)); central.append(le32(UInt32(data.count)));
            central.append(le32(UInt32(data.count)))
            central.append(le16(UInt16(nameBytes.count))); central.append(le16(0)); central.append(le16(0))
            central.append(le16(0)); central.append(le16(0)); central.append(le32(0))
            central.append(le32(offset))
            central.append(nameBytes)
        }
        let centralOffset = UInt32(archive.count)
        archive.append(central)
        archive.append(le32(0x0605_4b50))
        archive.append(le16(0)); archive.append(le16(0))
        archive.append(le16(UInt16(entries.count))); archive.append(le16(UInt16(entries.count)))
        archive.append(le32(UInt32(central.count))); archive.append(le32(centralOffset))
        archive.append(le16(0))
        return archive
    }

    private static func le16(_ value: UInt16) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
    private static func le32(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
}

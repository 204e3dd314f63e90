import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom`). Foundation's `UUID()` on Linux opens
    /// `/dev/urandom` for each one, which shows when thousands of files are named in a row (a bulk receive names
    /// three temporary files per version).
    package static func drawn() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { raw in
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
        }
        return UUID(uuid: uuid)
    }
}

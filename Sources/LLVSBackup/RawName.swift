import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// File names are bytes on Linux, and not every name is UTF-8. A backup keeps such names exactly: in a value ID
/// (a string) every byte of an invalid sequence becomes the character U+10FF00 + byte, from a private-use block no
/// real name needs; a character of that block that a name really holds is written the same way, byte by byte, so
/// the encoding is reversible for every name and leaves every other UTF-8 name as it is.
public enum RawName {
    public static let base: UInt32 = 0x10FF00

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out = String.UnicodeScalarView()
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var pending = Array(bytes)[...]
        func escape(_ slice: ArraySlice<UInt8>) {
            for byte in slice { out.append(Unicode.Scalar(base + UInt32(byte))!) }
        }
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                if (base...(base + 0xFF)).contains(scalar.value) {
                    escape(pending.prefix(encoded.count))
                } else {
                    out.append(scalar)
                }
                pending = pending.dropFirst(encoded.count)
            case .error(let length):
                escape(pending.prefix(length))
                pending = pending.dropFirst(length)
            case .emptyInput:
                return String(out)
            }
        }
    }

    public static func decode(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count)
        for scalar in name.unicodeScalars {
            if (base...(base + 0xFF)).contains(scalar.value) {
                bytes.append(UInt8(scalar.value - base))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// Calls `body` with the name's bytes as a C string.
    public static func withCString<T>(_ name: String, _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        try withCString(bytes: decode(name), body)
    }

    /// Calls `body` with raw name bytes as a C string.
    public static func withCString<T>(bytes: [UInt8], _ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        let bytes = bytes.map { CChar(bitPattern: $0) } + [0]
        return try bytes.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}

/// A local path as the bytes the kernel takes, so a backup can read files whose names are not UTF-8.
public struct LocalPath: Sendable {
    public var bytes: [UInt8]

    public init(_ string: String) { bytes = Array(string.utf8) }
    public init(bytes: [UInt8]) { self.bytes = bytes }

    public func appending(_ name: [UInt8]) -> LocalPath { LocalPath(bytes: bytes + [UInt8(ascii: "/")] + name) }

    /// The path as a string when its bytes are UTF-8; nil otherwise.
    public var string: String? { String(validating: bytes, as: UTF8.self) }
    /// For messages: the path with any byte that is not UTF-8 shown escaped.
    public var display: String { String(decoding: bytes, as: UTF8.self) }

    public func withCString<T>(_ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T {
        let terminated = bytes.map { CChar(bitPattern: $0) } + [0]
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }

    public func lstat() -> stat? {
        var info = stat()
        return withCString { Glibc.lstat($0, &info) } == 0 ? info : nil
    }

    /// The names in the directory, as bytes, without `.` and `..`.
    public func names() throws -> [[UInt8]] {
        guard let directory = withCString({ opendir($0) }) else {
            throw BackupError.unreadable(path: display, reason: String(cString: strerror(errno)))
        }
        defer { closedir(directory) }
        var names: [[UInt8]] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            names.append(name)
        }
        return names
    }

    /// A symlink's target, as bytes.
    public func linkTarget() -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = withCString { readlink($0, &buffer, buffer.count - 1) }
        guard count >= 0 else { return nil }
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }

    /// Opens the file for reading; the caller closes the descriptor.
    public func openForReading() -> Int32 {
        withCString { open($0, O_RDONLY | O_CLOEXEC) }
    }
}

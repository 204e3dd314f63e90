import Foundation

/// Appends little-endian integers, LEB128 varints and length-prefixed strings to a byte array.
/// Used for the compact binary records of the value map. Its methods are inlinable: a save encodes a map node per
/// level of each changed path, and an import does so for every version, so a call per byte across modules would
/// cost more than the bytes.
public struct ByteWriter {
    @usableFromInline var storage: [UInt8] = []

    public var bytes: [UInt8] { storage }

    public init() {}

    /// A writer whose buffer holds `capacity` bytes before it grows: a caller that knows the size up front saves the
    /// copies of growing it by halves.
    public init(capacity: Int) { storage.reserveCapacity(capacity) }

    /// How many bytes `varint(value)` writes.
    @inlinable
    public static func varintSize(_ value: UInt64) -> Int { value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7 }

    /// How many bytes `string(value)` writes.
    @inlinable
    public static func stringSize(_ value: String) -> Int {
        let count = value.utf8.count
        return varintSize(UInt64(count)) + count
    }

    @inlinable
    public mutating func byte(_ value: UInt8) { storage.append(value) }

    @inlinable
    public mutating func uint16(_ value: UInt16) {
        storage.append(UInt8(value & 0xff))
        storage.append(UInt8(value >> 8))
    }

    @inlinable
    public mutating func uint32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { storage.append(UInt8((value >> UInt32(shift)) & 0xff)) }
    }

    @inlinable
    public mutating func uint64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { storage.append(UInt8((value >> UInt64(shift)) & 0xff)) }
    }

    public mutating func data(_ value: Data) {
        varint(UInt64(value.count))
        storage.append(contentsOf: value)
    }

    public mutating func append(_ raw: some Sequence<UInt8>) { storage.append(contentsOf: raw) }

    @inlinable
    public mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            storage.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        storage.append(UInt8(v))
    }

    @inlinable
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            storage.append(contentsOf: utf8)
        }
    }
}

/// Reads what `ByteWriter` wrote, throwing `ByteReader.Failure` instead of reading past the end.
public struct ByteReader {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ data: Data) { self.bytes = [UInt8](data) }

    public var isAtEnd: Bool { position == bytes.count }

    /// How many bytes are left to read.
    public var remaining: Int { bytes.count - position }

    public mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw Failure(description: "record ends early at byte \(position)") }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func uint16() throws -> UInt16 {
        let low = UInt16(try byte())
        return low | UInt16(try byte()) << 8
    }

    public mutating func uint32() throws -> UInt32 {
        var value: UInt32 = 0
        for shift in stride(from: 0, to: 32, by: 8) { value |= UInt32(try byte()) << UInt32(shift) }
        return value
    }

    public mutating func uint64() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try byte()) << UInt64(shift) }
        return value
    }

    public mutating func data() throws -> Data {
        let count = try int()
        guard count <= bytes.count - position else {
            throw Failure(description: "data of \(count) bytes runs past the end at byte \(position)")
        }
        defer { position += count }
        return Data(bytes[position..<position + count])
    }

    /// The next `count` bytes as they are (no length before them).
    public mutating func raw(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count <= bytes.count - position else {
            throw Failure(description: "\(count) bytes run past the end at byte \(position)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    public mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw Failure(description: "varint too long at byte \(position)") }
            value |= UInt64(b & 0x7f) << shift
            if b & 0x80 == 0 { return value }
            shift += 7
        }
    }

    public mutating func int(limit: Int = Int(Int32.max)) throws -> Int {
        let value = try varint()
        guard value <= UInt64(limit) else {
            throw Failure(description: "number \(value) out of range at byte \(position)")
        }
        return Int(value)
    }

    public mutating func string() throws -> String {
        let count = try int()
        guard count <= bytes.count - position else {
            throw Failure(description: "string of \(count) bytes runs past the end at byte \(position)")
        }
        defer { position += count }
        guard let string = String(validating: bytes[position..<position + count], as: UTF8.self) else {
            throw Failure(description: "invalid UTF-8 at byte \(position)")
        }
        return string
    }
}

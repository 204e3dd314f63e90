import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a received changes file holds: the changes, with the data of large values decoded into temporary files
/// (the store reads those in pieces), so receiving a version costs bounded memory whatever it holds.
public struct ReceivedChanges: Sendable {
    public var changes: [Value.Change]
    /// Inserted or updated values whose data is in a temporary file.
    public var files: [(id: Value.ID, url: URL, isUpdate: Bool)]
    /// Inserted or updated values that arrived as a store keeps them (the compact format), stored as they are.
    public var stored: [ReceivedValue]

    public init(
        changes: [Value.Change], files: [(id: Value.ID, url: URL, isUpdate: Bool)] = [], stored: [ReceivedValue] = []
    ) {
        self.changes = changes
        self.files = files
        self.stored = stored
    }

    public func discard() {
        for file in files { try? FileManager.default.removeItem(at: file.url) }
        for value in stored { value.discard() }
    }
}

/// Reads a changes file (`[Value.Change]` as JSON) as a stream: each element is decoded on its own, and a `data`
/// string longer than the inline limit is base64-decoded piece by piece into a temporary file instead of being
/// kept. Everything else about the format (key order, `\/`, one-key objects) is JSONDecoder's business.
public enum ChangesReader {
    /// `temporaryDirectory` is where large values are decoded to (the system's by default).
    public static func read(
        _ encoded: EncodedChanges, path: String, inlineLimit: Int = Int(Store.inlineValueLimit),
        temporaryDirectory: URL = FileManager.default.temporaryDirectory
    ) throws -> ReceivedChanges {
        switch encoded {
        case .data(let data):
            return ReceivedChanges(changes: try RemoteFormat.decodeChanges(data, path: path))
        case .staged(let url):
            throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _):
            return try read(changes, path: path, inlineLimit: inlineLimit, temporaryDirectory: temporaryDirectory)
        case .file(let url, _):
            guard let input = FileHandle(forReadingAtPath: url.path) else {
                throw FileError.io(path: url.path, operation: "open", errno: errno)
            }
            defer { try? input.close() }
            var parser = ChangesStreamParser(
                path: path, inlineLimit: inlineLimit, temporaryDirectory: temporaryDirectory)
            do {
                while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
                    try piece.withUnsafeBytes { try parser.feed($0.bindMemory(to: UInt8.self)) }
                }
                return try parser.finish()
            } catch {
                parser.received.discard()
                parser.sink?.abandon()
                throw error
            }
        }
    }
}

/// The state machine under `ChangesReader`: the top-level array, its elements' nesting and strings, and the one
/// string being streamed to a file, if any.
struct ChangesStreamParser {
    let path: String
    let inlineLimit: Int
    let temporaryDirectory: URL
    var received = ReceivedChanges(changes: [])
    /// The bytes of the element being read, without the contents of a streamed string.
    private var element: [UInt8] = []
    private var depth = 0
    private var opened = false
    private var closed = false
    private var inString = false
    private var escaped = false
    /// Where the current string's contents start in `element`.
    private var stringStart = 0
    /// Whether the current string is the value of a `data` key.
    private var stringIsData = false
    /// The last string closed (if short) and whether a `:` followed it: the key of what comes next.
    private var lastString: String?
    private var currentKey: String?
    private var lastStructural: UInt8 = 0
    var sink: Base64FileSink?
    private var streamedFile: URL?

    init(path: String, inlineLimit: Int, temporaryDirectory: URL) {
        self.path = path
        self.inlineLimit = max(1024, inlineLimit)
        self.temporaryDirectory = temporaryDirectory
    }

    func malformed(_ reason: String) -> ExchangeError { .malformedFile(path: path, reason: reason) }

    mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) throws {
        var index = 0
        while index < bytes.count {
            if inString {
                index = try scanString(bytes, from: index)
                continue
            }
            let byte = bytes[index]
            index += 1
            if closed {
                guard isSpace(byte) else { throw malformed("there is more after the closing ]") }
                continue
            }
            if !opened {
                if isSpace(byte) { continue }
                guard byte == UInt8(ascii: "[") else { throw malformed("it does not start with [") }
                opened = true
                continue
            }
            if depth == 0 {
                switch byte {
                case _ where isSpace(byte): continue
                case UInt8(ascii: ","): continue
                case UInt8(ascii: "]"): closed = true; continue
                default: break
                }
            }
            element.append(byte)
            guard element.count < 64 << 20 else { throw malformed("an element is larger than 64 MiB outside its data") }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                escaped = false
                stringStart = element.count
                stringIsData = lastStructural == UInt8(ascii: ":") && currentKey == "data"
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                currentKey = nil
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { throw malformed("a bracket closes that was not opened") }
                if depth == 0 { try finishElement() }
            case UInt8(ascii: ":"):
                currentKey = lastString
            case UInt8(ascii: ","):
                currentKey = nil
            default:
                break
            }
            if !isSpace(byte) { lastStructural = byte }
        }
    }

    /// Consumes string bytes up to and including the closing quote (or the end of the piece); returns the index
    /// after what it consumed.
    private mutating func scanString(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) throws -> Int {
        var index = start
        while index < bytes.count {
            if escaped {
                escaped = false
                let byte = bytes[index]
                index += 1
                if let sink {
                    // Base64 holds no character JSON must escape except `/`, which encoders may write as `\/`.
                    guard byte == UInt8(ascii: "/") else {
                        throw malformed("a large data string has the escape \\\(Character(UnicodeScalar(byte)))")
                    }
                    try sink.write(CollectionOfOne(byte))
                } else if byte == UInt8(ascii: "/") {
                    element.append(byte)  // `\/` is `/`, which JSON need not escape; so buffered data holds base64 only
                } else {
                    element.append(UInt8(ascii: "\\"))
                    element.append(byte)
                }
                continue
            }
            // The next quote or backslash; everything before it is plain string contents. One pass for both: base64
            // escapes every `/` (`\/`), so looking for each on its own to the end of the piece at every escape, or
            // at every short string, made reading a changes file quadratic in its size.
            let stop = Self.firstQuoteOrBackslash(UnsafeBufferPointer(rebasing: bytes[index...]))
            let plain = UnsafeBufferPointer(rebasing: bytes[index..<(index + stop)])
            if let sink {
                try sink.write(plain)
            } else {
                element.append(contentsOf: plain)
                if stringIsData, element.count - stringStart > inlineLimit { try startStreaming() }
            }
            index += stop
            guard index < bytes.count else { break }
            let found = bytes[index]
            index += 1
            if found == UInt8(ascii: "\\") {
                escaped = true
                continue
            }
            try closeString()
            return index
        }
        return index
    }

    /// The offset of the first `"` or `\` in `bytes` (its count when there is none), eight bytes at a time: a word
    /// holds one of them when it XORed with that byte repeated has a zero byte.
    static func firstQuoteOrBackslash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = ones &* 0x22, backslashes = ones &* 0x5C
        var index = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let q = word ^ quotes, b = word ^ backslashes
            if ((q &- ones) & ~q | (b &- ones) & ~b) & highs != 0 { break }
            index += 8
        }
        while index < count {
            let byte = base[index]
            if byte == 0x22 || byte == 0x5C { return index }
            index += 1
        }
        return count
    }

    /// A `data` string has grown past the limit: what is buffered goes to a file sink, and so does the rest.
    private mutating func startStreaming() throws {
        guard streamedFile == nil else { throw malformed("an element has more than one large data string") }
        let sink = try Base64FileSink(path: path, in: temporaryDirectory)
        try sink.write(element[stringStart...])
        element.removeSubrange(stringStart...)
        self.sink = sink
    }

    private mutating func closeString() throws {
        inString = false
        if let sink {
            try sink.finish()
            streamedFile = sink.url
            self.sink = nil
            lastString = nil
        } else {
            let contents = element[stringStart...]
            lastString = contents.count <= 256 ? String(decoding: contents, as: UTF8.self) : nil
        }
        element.append(UInt8(ascii: "\""))
        lastStructural = UInt8(ascii: "\"")
    }

    private mutating func finishElement() throws {
        defer {
            element.removeAll(keepingCapacity: true)
            streamedFile = nil
            currentKey = nil
            lastStructural = 0
        }
        let change: Value.Change
        do {
            change = try JSONDecoder().decode(Value.Change.self, from: Data(element))
        } catch {
            if let streamedFile { try? FileManager.default.removeItem(at: streamedFile) }
            throw malformed(
                "change \(received.changes.count + received.files.count + 1): \(RemoteFormat.describe(error))")
        }
        guard let streamedFile else {
            received.changes.append(change)
            return
        }
        switch change {
        case .insert(let value): received.files.append((value.id, streamedFile, false))
        case .update(let value): received.files.append((value.id, streamedFile, true))
        default:
            try? FileManager.default.removeItem(at: streamedFile)
            throw malformed("a large data string sits in a change that carries no value")
        }
    }

    mutating func finish() throws -> ReceivedChanges {
        guard opened, closed, !inString, depth == 0 else { throw malformed("it ends before its closing ]") }
        return received
    }

    private func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}

/// Decodes base64 text given in pieces into a temporary file, 4 MiB of text at a time.
final class Base64FileSink {
    let url: URL
    private let path: String
    private let out: FileHandle
    private var pending: [UInt8] = []

    init(path: String, in directory: URL) throws {
        self.path = path
        // Named after the process, as the store's temporaries are, so a later run removes it if this one is killed.
        url = directory.appendingPathComponent(
            "\(TemporaryWriter.tag)-\(UUID.drawn().uuidString)-receive", isDirectory: false)
        out = try POSIX.createFile(url.path)
        pending.reserveCapacity(4 << 20)
    }

    func write<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        pending.append(contentsOf: bytes)
        if pending.count >= 4 << 20 { try flush(keepingTail: true) }
    }

    private func flush(keepingTail: Bool) throws {
        let usable = keepingTail ? pending.count / 4 * 4 : pending.count
        guard usable > 0 else { return }
        guard let decoded = Data(base64Encoded: Data(pending[..<usable])) else {
            throw ExchangeError.malformedFile(path: path, reason: "a large value's data is not valid base64")
        }
        try out.write(contentsOf: decoded)
        pending.removeSubrange(..<usable)
    }

    func finish() throws {
        try flush(keepingTail: false)
        try out.close()
    }

    func abandon() {
        try? out.close()
        try? FileManager.default.removeItem(at: url)
    }
}

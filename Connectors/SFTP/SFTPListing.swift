import Foundation

/// A folder's listing as libcurl gives it over SFTP: the server's `ls -l` line for each entry (SFTP version 3, which
/// OpenSSH speaks, sends that line beside each name; libcurl passes it on and adds ` -> target` for a link).
/// OpenSSH writes `mode links user group size month day time-or-year name`, the name after exactly one space, so a
/// name's own leading spaces survive. The line's time is the server's local time to the minute, with no zone: too
/// vague to compare with this machine's clock, so it is not read.
enum SFTPListing {
    enum Kind: Equatable { case file, folder, link, other }

    struct Entry: Equatable {
        var name: String
        var kind: Kind
        var size: Int64?
    }

    /// Fields before the name.
    static let fieldsBeforeName = 8

    /// The entries of a listing's text; `.` and `..` left out.
    /// - Throws: `SFTPListing.Unreadable` for a line in another form.
    static func parse(_ text: Data) throws -> [Entry] {
        var entries: [Entry] = []
        for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let entry = try parse(line: line)
            if entry.name != "." && entry.name != ".." { entries.append(entry) }
        }
        return entries
    }

    struct Unreadable: Error, Equatable { var line: String }

    static func parse(line: Data.SubSequence) throws -> Entry {
        let bytes = Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line)
        var fields: [String] = []
        var index = 0
        while fields.count < fieldsBeforeName {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: " ") { index += 1 }
            guard index > start, index < bytes.count else {
                throw Unreadable(line: String(decoding: bytes, as: UTF8.self))
            }
            fields.append(String(decoding: bytes[start..<index], as: UTF8.self))
        }
        // Exactly one space separates the last field from the name.
        var name = String(decoding: bytes[(index + 1)...], as: UTF8.self)
        guard !name.isEmpty, let type = fields[0].first else {
            throw Unreadable(line: String(decoding: bytes, as: UTF8.self))
        }
        let kind: Kind =
            switch type {
            case "-": .file
            case "d": .folder
            case "l": .link
            default: .other
            }
        if kind == .link, let arrow = name.range(of: " -> ", options: .backwards) {
            name = String(name[..<arrow.lowerBound])
        }
        return Entry(name: name, kind: kind, size: kind == .file ? Int64(fields[4]) : nil)
    }

    /// A names-only listing (one name a line), `.` and `..` left out.
    static func names(_ text: Data) -> [String] {
        text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map {
            String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self)
        }.filter { $0 != "." && $0 != ".." }
    }
}

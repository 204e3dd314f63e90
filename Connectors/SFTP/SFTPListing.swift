import Foundation

/// A folder's listing as libcurl gives it over SFTP: the server's `ls -l` line for each entry (SFTP version 3, which
/// OpenSSH speaks, sends that line beside each name; libcurl passes it on and adds ` -> target` for a link).
/// OpenSSH writes `mode links user group size month day time-or-year name`, the name after exactly one space, so a
/// name's own leading spaces survive. The line's time is the server's local time to the minute, with no zone: too
/// vague to show as a file's time; only its latest possible moment is kept, to tell long-abandoned files.
enum SFTPListing {
    enum Kind: Equatable { case file, folder, link, other }

    struct Entry: Equatable {
        var name: String
        var kind: Kind
        var size: Int64?
        /// The line's time as shown (month, day, time or year), read only where it is needed (`latestModified`).
        var shownTime: [String] = []

        /// The latest moment the line's time can mean (`latestTime`); nil when it cannot be read.
        func latestModified(now: Date) -> Date? {
            guard shownTime.count == 3 else { return nil }
            return SFTPListing.latestTime(month: shownTime[0], day: shownTime[1], timeOrYear: shownTime[2], now: now)
        }
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
        return Entry(
            name: name, kind: kind, size: kind == .file ? Int64(fields[4]) : nil,
            shownTime: Array(fields[5...7]))
    }

    static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The latest moment in UTC that `ls -l`'s `Dec  6 23:10` (this year, or last year when that is ahead of now) or
    /// `Jan  3  2025` (some time that day) can mean, whatever the server's time zone (UTC−12 to UTC+14): no file is
    /// newer than it. Enough to tell that an upload's temporary file was abandoned days ago, never to show.
    static func latestTime(month: String, day: String, timeOrYear: String, now: Date) -> Date? {
        guard let monthIndex = months.firstIndex(of: month), let dayNumber = Int(day), (1...31).contains(dayNumber)
        else { return nil }
        let calendar = utcCalendar
        var components = DateComponents(month: monthIndex + 1, day: dayNumber)
        let lastMinute: TimeInterval
        if let year = Int(timeOrYear) {
            components.year = year
            lastMinute = 24 * 3600
        } else {
            let clock = timeOrYear.split(separator: ":").compactMap { Int($0) }
            guard clock.count == 2, (0..<24).contains(clock[0]), (0..<60).contains(clock[1]) else { return nil }
            components.year = calendar.component(.year, from: now)
            components.hour = clock[0]
            components.minute = clock[1]
            lastMinute = 60
        }
        guard var shown = calendar.date(from: components) else { return nil }
        // Without a year, `ls` shows the last six months: a date ahead of now (beyond any zone) is last year's.
        if Int(timeOrYear) == nil, shown > now.addingTimeInterval(15 * 3600),
            let lastYear = calendar.date(byAdding: .year, value: -1, to: shown)
        {
            shown = lastYear
        }
        // The server's local time is at most 12 hours behind UTC.
        return shown.addingTimeInterval(lastMinute + 12 * 3600)
    }

    /// A names-only listing (one name a line), `.` and `..` left out.
    static func names(_ text: Data) -> [String] {
        text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map {
            String(decoding: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0, as: UTF8.self)
        }.filter { $0 != "." && $0 != ".." }
    }
}

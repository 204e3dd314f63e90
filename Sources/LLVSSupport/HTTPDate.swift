import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates: RFC 1123 (`Wed, 27 Sep 2017 14:28:34 GMT`), with RFC 850 and asctime tolerated when reading, and
/// ISO 8601 as a last resort (some WebDAV servers). Used for Retry-After, Last-Modified and getlastmodified.
public enum HTTPDate {
    public static func parse(_ text: String) -> Date? {
        if let date = parseRFC1123(text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return try? Date(text, strategy: .iso8601)
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The form servers send almost always, read without a formatter: a PROPFIND of 10,000 entries has 10,000 of
    /// them, and an ICU formatter built for each would cost more than the rest of the listing.
    package static func parseRFC1123(_ text: String) -> Date? {
        // Split by bytes: the form is ASCII, and splitting by Characters would cost more than the rest.
        let parts = text.utf8.split(separator: UInt8(ascii: " ")).map { Substring($0) }
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" || parts[5] == "UTC",
            let day = Int32(parts[1]), (1...31).contains(day),
            let month = months.firstIndex(of: String(parts[2])),
            let year = Int32(parts[3]), year >= 1970
        else { return nil }
        let clock = parts[4].utf8.split(separator: UInt8(ascii: ":")).map { Substring($0) }
        guard clock.count == 3, let hour = Int32(clock[0]), let minute = Int32(clock[1]), let second = Int32(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        var fields = tm()
        fields.tm_year = year - 1900
        fields.tm_mon = Int32(month)
        fields.tm_mday = day
        fields.tm_hour = hour
        fields.tm_min = minute
        fields.tm_sec = second
        let seconds = timegm(&fields)
        return seconds == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    public static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

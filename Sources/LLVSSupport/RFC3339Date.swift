import Foundation

/// RFC 3339 times as the JSON APIs write them: `2026-12-01T01:34:12.236Z` (Drive, Graph: fractional seconds, UTC)
/// and `2026-12-01T01:34:12-08:00` (Box: whole seconds, an offset). Both forms are read by every caller, because a
/// service that promises one sometimes sends the other.
public enum RFC3339Date {
    /// The time, or nil when `text` is neither form.
    public static func parse(_ text: String) -> Date? {
        (try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
            ?? (try? Date(text, strategy: .iso8601))
    }

    /// UTC with milliseconds and `Z`. The milliseconds are counted here, rounded: the formatter truncates, and
    /// `….678Z` parses to a binary fraction just below .678, which it would write as `….677Z`.
    public static func format(_ date: Date) -> String {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let seconds = (milliseconds / 1000).rounded(.down)
        let whole = Date(timeIntervalSince1970: seconds).formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
        let fraction = Int(milliseconds - seconds * 1000)
        return String(whole.dropLast()) + "." + String(String(fraction + 1000).dropFirst()) + "Z"
    }
}

import Foundation

/// JSON carried in an HTTP header (Dropbox's `Dropbox-API-Arg` and `Dropbox-API-Result`): a header value holds
/// printable ASCII only, so every other character is written as a JSON `\uXXXX` escape of its UTF-16 units (a
/// character above U+FFFF as a surrogate pair). The JSON means the same; only its spelling changes. Here so that a
/// connector and the mock of its service write it alike.
public enum HeaderSafeJSON {
    public static func escape(_ json: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x20, scalar.value < 0x7F {
                escaped.unicodeScalars.append(scalar)
            } else {
                for unit in String(scalar).utf16 { escaped += String(format: "\\u%04x", unit) }
            }
        }
        return escaped
    }

    /// Whether a header value is printable ASCII, as a header-safe argument must be.
    public static func isSafe(_ value: String) -> Bool {
        value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
    }
}

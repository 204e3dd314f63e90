import Foundation

/// Text made safe inside an XML element or attribute: `&`, `<`, `>`, `"` and `'` as entities. For the small XML
/// bodies a connector sends (S3's batch delete and completion) and a mock answers.
public enum XMLText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}

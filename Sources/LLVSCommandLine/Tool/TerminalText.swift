import Foundation

/// Text for the terminal that may quote what a remote or a store holds (names, server messages). Control
/// characters are shown escaped (`\e`, `\n`, `\u{7}`), so a hostile name can neither move the cursor, ring the bell,
/// recolour the screen nor forge a whole `llvs: …` line of its own.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\u{1B}": out += "\\e"
            case "\\": out += "\\\\"
            case "\u{10FF00}"..."\u{10FFFF}":
                // A byte of a name that is not UTF-8 (RawName), shown as the byte it stands for.
                out += "\\x" + String(format: "%02x", scalar.value - 0x10FF00)
            default:
                // C0 and C1 controls, DEL, and the bidirectional overrides that reorder what follows them.
                if (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
                    || (0x202A...0x202E).contains(scalar.value)
                    || (0x2066...0x2069).contains(scalar.value)
                {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// One line to standard error, `llvs: ` first, escaped.
    static func warn(_ message: String) {
        FileHandle.standardError.write(Data("llvs: \(escaped(message))\n".utf8))
    }
}

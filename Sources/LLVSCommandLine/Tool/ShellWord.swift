/// A word as a POSIX shell (bash, zsh, sh) reads it back: single-quoted, a quote inside written `'\''`.
enum ShellWord {
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Left bare when it holds only characters no shell treats specially (what makes a crontab line readable).
    static func quotedIfNeeded(_ word: String) -> String {
        !word.isEmpty && word.allSatisfy { $0.isLetter || $0.isNumber || "/-_.,=:@".contains($0) } ? word : quoted(word)
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Secrets given on standard input (a WebDAV password, a client secret, a passphrase), never on the command line.
enum SecretInput {
    /// On a terminal, one line typed without echo after `prompt`; otherwise everything up to the end, without its final
    /// line break. Empty is refused, naming `option`.
    static func read(prompt: String, option: String) throws -> String {
        let text: String
        if isatty(STDIN_FILENO) == 1 {
            // Echo goes off before the prompt shows: what is typed after it is never flushed away, nor shown.
            var settings = termios()
            let canHide = tcgetattr(STDIN_FILENO, &settings) == 0
            var hidden = settings
            hidden.c_lflag &= ~tcflag_t(ECHO)
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden) }
            FileHandle.standardError.write(Data(prompt.utf8))
            text = readLine(strippingNewline: true) ?? ""
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings) }
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
                in: .newlines)
        }
        guard !text.isEmpty else { throw CommandError.usage("\(option) read nothing from standard input") }
        return text
    }

    /// A new secret, which nothing checks yet (a new passphrase): on a terminal it is typed twice and the two must
    /// match, so a typo cannot lock the data away; from a pipe it is read once, as `read` does.
    static func readNew(prompt: String, option: String) throws -> String {
        let first = try read(prompt: prompt, option: option)
        guard isatty(STDIN_FILENO) == 1 else { return first }
        let second = try read(prompt: "Again, to confirm: ", option: option)
        guard first == second else { throw CommandError.usage("the two entries differ; nothing was changed") }
        return first
    }
}

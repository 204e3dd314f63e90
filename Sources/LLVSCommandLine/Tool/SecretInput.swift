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
            FileHandle.standardError.write(Data(prompt.utf8))
            var settings = termios()
            let canHide = tcgetattr(STDIN_FILENO, &settings) == 0
            var hidden = settings
            hidden.c_lflag &= ~tcflag_t(ECHO)
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden) }
            text = readLine(strippingNewline: true) ?? ""
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings) }
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        guard !text.isEmpty else { throw CommandError.usage("\(option) read nothing from standard input") }
        return text
    }
}

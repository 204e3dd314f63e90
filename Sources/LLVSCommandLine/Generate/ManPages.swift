import Foundation

/// Man pages in roff (the `man` macros), generated from `CommandCatalog`: `llvs(1)` with every command, the
/// environment and the exit codes, and `llvs-COMMAND(1)` for each command (`llvs-remote-add(1)`) with its options and
/// examples, so `man llvs-backup` says what `llvs backup --help` says.
enum ManPages {
    /// File name → page.
    static func pages(_ catalog: CommandCatalog, tool: LLVSTool, date: Date = Date()) -> [(name: String, text: String)]
    {
        let day = date.formatted(.iso8601.year().month().day())
        var pages = [("llvs.1", overview(catalog, tool: tool, day: day))]
        for entry in catalog.all { pages.append((entry.pageName + ".1", page(entry, day: day))) }
        return pages
    }

    static func overview(_ catalog: CommandCatalog, tool: LLVSTool, day: String) -> String {
        var text = header("LLVS", day: day)
        text +=
            ".SH NAME\nllvs \\- a versioned store that syncs app data the way Git syncs code, and backs up folders\n"
        text += ".SH SYNOPSIS\n.B llvs\n.RB [ \\-\\-store\n.IR DIR ]\n.I COMMAND\n.RI [ ARGUMENTS ]\n"
        text += ".br\n.B llvs \\-\\-version\n"
        text += ".SH DESCRIPTION\n"
        text +=
            escaped(
                "llvs keeps values in versions that branch and merge, syncs them through remotes (local folders, WebDAV, "
                    + "Nextcloud, Google Drive, OneDrive, Box, pCloud) in the layout LLVS apps use, and backs up folders "
                    + "with their full history. Run llvs COMMAND --help, or man llvs-COMMAND, for a command's options.")
            + "\n"
        text += ".SH COMMANDS\n"
        for (name, summary) in catalog.topLevel {
            text += ".TP\n.B \(escaped(name))\n\(escaped(summary))\n"
        }
        for group in catalog.groups {
            for entry in group.commands {
                text += ".TP\n.B \(escaped(entry.name))\n\(escaped(entry.summary))\n"
            }
        }
        text += ".SH ENVIRONMENT\n"
        for (name, meaning) in [
            ("LLVS_STORE", "the store's folder (as --store)"),
            ("LLVS_DEADLINE", "seconds any command may take before it stops with an error (default 86400; 0 for none)"),
            ("LLVS_HTTP_TRACE", "1 to print every request and answer, credentials redacted"),
            ("LLVS_PASSPHRASE", "the passphrase of an encrypted remote"),
            ("XDG_CONFIG_HOME", "where remotes kept for all stores and accounts are (default ~/.config/llvs)"),
        ] {
            text += ".TP\n.B \(name)\n\(escaped(meaning))\n"
        }
        text += ".SH EXIT STATUS\n"
        for code in ExitCode.allCases { text += ".TP\n.B \(code.rawValue)\n\(escaped(code.meaning))\n" }
        text += ".SH SEE ALSO\n"
        text += catalog.all.map { "\\fB\($0.pageName)\\fR(1)" }.joined(separator: ",\n") + "\n"
        return text
    }

    static func page(_ entry: CommandCatalog.Entry, day: String) -> String {
        var text = header(entry.pageName.uppercased(), day: day)
        text += ".SH NAME\n\(escaped(entry.pageName)) \\- \(escaped(entry.summary))\n"
        text += ".SH SYNOPSIS\n.B llvs \(escaped(entry.name))\n"
        if !entry.arguments.isEmpty { text += ".I \(escaped(entry.arguments))\n" }
        text += ".RI [ OPTIONS ]\n"
        text += ".SH DESCRIPTION\n\(escaped(entry.summary))\n"
        text += ".SH OPTIONS\n"
        for option in entry.options {
            let spec = option.spec
            var names = spec.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            names += "\\fB\\-\\-\(escaped(spec.name))\\fR"
            if let value = spec.valueName { names += " \\fI\(escaped(value))\\fR" }
            var help = spec.help
            if let choices = option.choices { help += " (one of: \(choices.joined(separator: ", ")))" }
            text += ".TP\n\(names)\n\(escaped(help))\n"
        }
        text += ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nprint the command's help\n"
        if !entry.examples.isEmpty {
            text += ".SH EXAMPLES\n"
            for example in entry.examples { text += ".PP\n.nf\n\(escaped(example))\n.fi\n" }
        }
        text += ".SH SEE ALSO\n\\fBllvs\\fR(1)\n"
        return text
    }

    private static func header(_ title: String, day: String) -> String {
        ".TH \(title) 1 \"\(day)\" \"llvs \(ToolVersion.release)\" \"LLVS for Linux\"\n"
    }

    /// Text as roff shows it: backslashes and hyphens escaped, characters past ASCII as `\[uXXXX]` (troff reads
    /// bytes), and a line that would start with `.` or `'` (a request) guarded.
    static func escaped(_ text: String) -> String {
        let plain = text.unicodeScalars.map { scalar in
            switch scalar {
            case "\\": "\\e"
            case "-": "\\-"
            default: scalar.isASCII ? String(scalar) : String(format: "\\[u%04X]", scalar.value)
            }
        }.joined()
        return plain.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }
}

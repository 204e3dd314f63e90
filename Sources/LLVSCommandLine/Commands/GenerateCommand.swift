import Foundation

/// `llvs generate`: shell completions and man pages, made from the commands' own declarations (as restic's
/// `generate`), for `scripts/install` and packages.
struct GenerateCommand: Command {
    static let name = "generate"
    static let summary =
        "Write shell completions (bash, zsh, fish) and man pages, made from the commands' declarations."
    static let arguments = ""
    static let bashOption = Option("bash-completion", "FILE", "write the bash completion to FILE", .nonEmpty)
    static let zshOption = Option("zsh-completion", "FILE", "write the zsh completion to FILE", .nonEmpty)
    static let fishOption = Option("fish-completion", "FILE", "write the fish completion to FILE", .nonEmpty)
    static let manOption = Option("man", "DIR", "write the man pages (llvs.1, llvs-COMMAND.1) into DIR", .nonEmpty)
    static let options: [any DeclaredOption] = [bashOption, zshOption, fishOption, manOption]
    static let examples = [
        "llvs generate --bash-completion ~/.local/share/bash-completion/completions/llvs",
        "llvs generate --man /usr/local/share/man/man1",
    ]

    let bash: String?
    let zsh: String?
    let fish: String?
    let man: String?

    init(_ arguments: ParsedArguments) throws {
        bash = arguments[Self.bashOption]
        zsh = arguments[Self.zshOption]
        fish = arguments[Self.fishOption]
        man = arguments[Self.manOption]
        guard bash != nil || zsh != nil || fish != nil || man != nil else {
            throw CommandError.usage(
                "say what to write: --bash-completion, --zsh-completion, --fish-completion or --man")
        }
    }

    func run(in context: CommandContext) async throws {
        let catalog = CommandCatalog(connectors: context.connectors)
        for (path, text) in [
            (bash, CompletionScripts.bash(catalog)), (zsh, CompletionScripts.zsh(catalog)),
            (fish, CompletionScripts.fish(catalog)),
        ] {
            guard let path else { continue }
            try write(text, to: URL(fileURLWithPath: path))
            context.writeLine("Wrote \(path).")
        }
        if let man {
            let folder = URL(fileURLWithPath: man)
            let pages = ManPages.pages(catalog, tool: LLVSTool(connectors: context.connectors))
            for (name, text) in pages { try write(text, to: folder.appendingPathComponent(name)) }
            context.writeLine("Wrote \(pages.count) man pages into \(man).")
        }
    }

    private func write(_ text: String, to url: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw CommandError.failed("Cannot write \(url.path): \(error.localizedDescription)")
        }
    }
}

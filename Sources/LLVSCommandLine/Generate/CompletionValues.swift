import Foundation
import LLVS
import LLVSBackup

/// `llvs __complete remotes|sources`: the names a completion offers, one a line, for the store of the working folder
/// (or `--store`, `$LLVS_STORE`). Quiet and successful when there is nothing to offer: a completion must never print
/// an error into the user's command line.
enum CompletionValues {
    static func print(_ words: [String], connectors: ConnectorRegistry) async {
        guard let arguments = try? ParsedArguments(words, options: [CommandContext.storeOption]) else { return }
        let context = CommandContext(storeOption: arguments[CommandContext.storeOption], connectors: connectors)
        let names: [String]
        switch arguments.positionals.first {
        case "remotes":
            let directory = RemoteDirectory(storeURL: context.storeURL, configuration: context.configuration)
            names = ((try? directory.visible()) ?? [:]).keys.sorted()
        case "sources": names = await sources(context)
        default: names = []
        }
        for name in names { Swift.print(name) }
    }

    private static func sources(_ context: CommandContext) async -> [String] {
        guard let coordinator = try? context.openCoordinator(), let current = await coordinator.currentVersionId else {
            return []
        }
        return ((try? BackupReader(store: coordinator.store).sources(at: current)) ?? []).sorted()
    }
}

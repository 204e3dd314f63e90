import Foundation
import LLVS
import LLVSBackup

/// `llvs __complete remotes|sources`: the names a completion offers, one a line, for the store of the working folder
/// (or `--store`, `$LLVS_STORE`). Quiet and successful when there is nothing to offer: a completion must never print
/// an error into the user's command line.
enum CompletionValues {
    static func print(_ words: [String], connectors: ConnectorRegistry) async {
        let moved = LLVSTool.movingLeadingStoreOption(words)
        var storeOption: String?
        if let index = moved.firstIndex(of: "--store"), index + 1 < moved.count { storeOption = moved[index + 1] }
        let context = CommandContext(storeOption: storeOption, connectors: connectors)
        let names: [String]
        switch moved.first {
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

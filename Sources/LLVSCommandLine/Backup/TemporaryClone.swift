import Foundation
import LLVS

/// `llvs restore --from REMOTE|URL`: the remote's history brought into a store of its own under the system's
/// temporary folder ($TMPDIR), from its snapshot when it has one, restored from, and removed at the end (also when
/// the restore fails), so no store needs to exist on this machine first. A remote is a set of version and changes
/// files, each version's values in one file: the versions up to the backup are what holds its listings and chunks.
struct TemporaryClone {
    let folder: URL
    let coordinator: StoreCoordinator

    static func make(from remote: String, context: CommandContext) async throws -> TemporaryClone {
        let connection = try await RemoteConnection.holdingStore(remote, context: context)
        let folder = TemporaryStoreFolder.make("restore")
        do {
            let store = try Store(
                creatingAt: folder, descriptor: StoreDescriptor(storage: "file"),
                makeStorage: CommandContext.storageMaker)
            let coordinator = try StoreCoordinator(store: store)
            let exchange = try await connection.exchange(for: store, storeRequired: true)
            let outcome = try await coordinator.bootstrapFromSnapshot(using: exchange)
            if case .fellBackToFullPull = outcome { TerminalText.warn(outcome.message) }
            return TemporaryClone(folder: folder, coordinator: coordinator)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}

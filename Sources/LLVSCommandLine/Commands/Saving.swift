import Foundation
import LLVS

/// The options `put` and `rm` share, and the save they both make.
enum Saving {
    static let branch = Option("branch", "NAME", "save the version on a named branch", .nonEmpty)
    static let base = Option(
        "on", "VERSION",
        "save on top of VERSION instead of the current version, starting a branch; the current version stays", .text)
    static let options: [any DeclaredOption] = [branch, base]

    /// Saves `change` on the current version (which moves to the new one), or on `base` when given (which leaves
    /// the current version where it is). Returns the new version.
    static func save(
        _ change: Value.Change, branch: String?, on base: String?, in context: CommandContext,
        coordinator: StoreCoordinator
    ) async throws -> Version {
        try await save(storing: [change], files: [], branch: branch, on: base, in: context, coordinator: coordinator)
    }

    /// As `save(_:…)`, with values stored from files as well, each read once in pieces.
    static func save(
        storing changes: [Value.Change], files: [(id: Value.ID, url: URL, isUpdate: Bool)], branch: String?,
        on base: String?,
        in context: CommandContext, coordinator: StoreCoordinator
    ) async throws -> Version {
        let branch = branch.map { Branch($0) }
        guard let base else { return try await coordinator.save(changes, files: files, branch: branch) }
        let store = coordinator.store
        let predecessor = try context.resolveVersion(base, in: store)
        var metadata = Version.Metadata()
        if let branch { metadata[.branch] = try Version.MetadataValue(branch.name) }
        return try store.makeVersion(
            basedOn: .init(idOfFirst: predecessor.id), storing: changes, files: files, metadata: metadata)
    }

    /// The value as it is where the save will go, to tell an insert from an update.
    static func existing(
        _ id: Value.ID, on base: String?, in context: CommandContext, coordinator: StoreCoordinator
    ) async throws -> Value? {
        if let base {
            return try coordinator.store.value(id: id, at: context.resolveVersion(base, in: coordinator.store).id)
        }
        return try await coordinator.value(id: id)
    }
}

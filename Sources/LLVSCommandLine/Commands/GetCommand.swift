import Foundation
import LLVS

struct GetCommand: Command {
    static let name = "get"
    static let summary = "Write value ID, as it is at the current version (or at VERSION), to standard output."
    static let arguments = "ID"
    static let atOption = Option("at", "VERSION", "read at this version (an ID or a unique prefix of one)", .text)
    static let options: [any DeclaredOption] = [atOption]
    static let positionalCount = 1...1

    let id: Value.ID
    let at: String?

    init(_ arguments: ParsedArguments) throws {
        id = Value.ID(arguments.positionals[0])
        at = arguments[Self.atOption]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        let versionId: Version.ID
        if let at {
            versionId = try context.resolveVersion(at, in: store).id
        } else {
            guard let current = await coordinator.currentVersionId else {
                throw CommandError.notFound("There is no value \(id): the store is empty.")
            }
            versionId = current
        }
        // In pieces, as storage holds it: a value of any size costs bounded memory.
        let found = try store.writeValue(id: id, at: versionId) { piece in
            try FileHandle.standardOutput.write(contentsOf: piece)
        }
        guard found else { throw CommandError.notFound("There is no value \(id) at version \(versionId).") }
    }
}

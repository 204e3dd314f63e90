import Foundation
import LLVS

struct PutCommand: Command {
    static let name = "put"
    static let summary = "Save the contents of FILE (or standard input for -) as value ID, in a new version on top of the current one."
    static let arguments = "ID FILE|-"
    static let options = Saving.options
    static let positionalCount = 2...2

    let id: Value.ID
    let source: String
    let branch: String?
    let base: String?

    init(_ arguments: ParsedArguments) throws {
        guard !arguments.positionals[0].isEmpty else { throw CommandError.usage("the value ID is empty") }
        id = Value.ID(arguments.positionals[0])
        source = arguments.positionals[1]
        branch = arguments[Saving.branch]
        base = arguments[Saving.base]
    }

    func run(in context: CommandContext) async throws {
        let data: Data
        if source == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            guard let contents = FileManager.default.contents(atPath: source) else {
                throw CommandError.notFound("Cannot read \(source): no such readable file.")
            }
            data = contents
        }
        let coordinator = try context.openCoordinator()
        let exists = try await Saving.existing(id, on: base, in: context, coordinator: coordinator) != nil
        let value = Value(id: id, data: data)
        let version = try await Saving.save(exists ? .update(value) : .insert(value), branch: branch, on: base,
                                            in: context, coordinator: coordinator)
        context.writeLine(version.id.rawValue)
    }
}

import Foundation
import LLVS
import LLVSSupport

struct PutCommand: Command {
    static let name = "put"
    static let summary =
        "Save the contents of FILE (or standard input for -) as value ID, in a new version on top of the current one."
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
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        // A value of any size costs bounded memory: a regular file is stored from where it is, read once in pieces.
        // Standard input, a pipe or a device is read up to `inMemoryLimit`; what ends by then is stored from memory,
        // and anything longer goes on into a file in the store's temporary folder (in pieces too), since only a file
        // can be checked for changing while it is read.
        var staged: URL?
        defer { if let staged { try? FileManager.default.removeItem(at: staged) } }
        let content: Content
        if source != "-", POSIX.isRegularFile(source) {
            content = .file(URL(fileURLWithPath: source))
        } else {
            // Named for removal before it is written, so a copy that fails part way (a full disk) goes too.
            let spill = store.temporaryFile("put")
            staged = spill
            content = try Self.read(source, spillingTo: spill)
        }
        let exists = try await Saving.existing(id, on: base, in: context, coordinator: coordinator) != nil
        let version: Version
        switch content {
        case .data(let data):
            let value = Value(id: id, data: data)
            version = try await Saving.save(
                exists ? .update(value) : .insert(value), branch: branch, on: base, in: context,
                coordinator: coordinator)
        case .file(let file):
            version = try await Saving.save(
                storing: [], files: [(id: id, url: file, isUpdate: exists)], branch: branch, on: base,
                in: context, coordinator: coordinator)
        }
        context.writeLine(version.id.rawValue)
    }

    /// What is to be stored: bytes already read, or a file to read in pieces.
    enum Content {
        case data(Data)
        case file(URL)
    }

    /// How much of standard input or a pipe is held in memory before it goes to a file instead.
    static let inMemoryLimit = 4 << 20

    /// Reads standard input (for `-`) or a file that is not a regular one: whole when it ends within `inMemoryLimit`,
    /// otherwise copied into `spill` a piece at a time.
    static func read(_ source: String, spillingTo spill: URL) throws -> Content {
        let input: FileHandle
        if source == "-" {
            input = .standardInput
        } else {
            if POSIX.isDirectory(source) {
                throw CommandError.usage("\(source) is a folder; put stores one file (`llvs backup` stores a folder)")
            }
            guard let opened = FileHandle(forReadingAtPath: source) else {
                throw CommandError.failed("Cannot read \(source): \(String(cString: strerror(errno))).")
            }
            input = opened
        }
        defer { if source != "-" { try? input.close() } }
        let name = source == "-" ? "standard input" : source
        do {
            var head = Data()
            while head.count <= inMemoryLimit {
                guard let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty else { return .data(head) }
                head.append(piece)
            }
            let output: FileHandle
            do { output = try POSIX.createFile(spill.path) } catch {
                throw CommandError.failed("Cannot write \(spill.path): \(error).")
            }
            defer { try? output.close() }
            try output.write(contentsOf: head)
            while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty { try output.write(contentsOf: piece) }
            return .file(spill)
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError.failed("Cannot read \(name) into the store: \(error.localizedDescription)")
        }
    }
}

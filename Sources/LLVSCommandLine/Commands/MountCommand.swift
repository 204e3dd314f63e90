import Foundation
import LLVS
import LLVSMount
import LLVSRemoteStore
import LLVSSupport

/// `llvs mount`: the store's backups and versions as a read-only file system (`LLVSMount`), until Ctrl-C or
/// `fusermount3 -u`. With `--from`, the store is a remote's, read where it lies (`RemoteBackedStore`): its history is
/// read at the start, each value (a listing, a chunk) when a reader first needs it.
struct MountCommand: Command {
    static let name = "mount"
    static let summary =
        "Mount the store read-only at MOUNTPOINT: every kept backup of every source, every version's values, the heads; until Ctrl-C or `fusermount3 -u`."
    static let arguments = "MOUNTPOINT"
    static let fromOption = Option(
        "from", "REMOTE|URL",
        "mount a remote (a name, or a URL) without a store of your own: its history is read at the start, and listings and file contents as they are read, the last \(RemoteBackedStore.defaultCacheLimit >> 20) MiB of them kept in memory",
        .nonEmpty)
    static let options: [any DeclaredOption] = [fromOption]
    static let positionalCount = 1...1
    static let examples = [
        "llvs mount /mnt/llvs    # then: ls /mnt/llvs/sources/home-me-Documents/latest/",
        "diff -r /mnt/llvs/sources/srv-data/2026-12-01T03:17:00Z /srv/data",
        "llvs mount /mnt/backups --from webdav://host/backups",
    ]

    let mountPoint: String
    let from: String?
    var runsUntilStopped: Bool { true }

    init(_ arguments: ParsedArguments) throws {
        mountPoint = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        from = arguments[Self.fromOption]
    }

    func run(in context: CommandContext) async throws {
        guard let from else {
            let coordinator = try context.openCoordinator()
            let current = await coordinator.currentVersionId
            try await serve(coordinator.store, current: current, named: context.storePath, context: context)
            return
        }
        let connection = try await RemoteConnection.holdingStore(from, context: context)
        let codec = try await RemoteFormatRecord.settle(
            on: connection.fileSystem, basePath: connection.basePath, mayWrite: false)
        let folder = TemporaryStoreFolder.make("mount")
        // A version an earlier build sent has no index: read whole this once, it is given one for the next mount.
        let opened = try await RemoteBackedStore.open(
            fileSystem: connection.fileSystem, basePath: connection.basePath, codec: codec, in: folder,
            writingMissingIndexes: true)
        defer { opened.remove() }
        for failure in opened.failures { TerminalText.warn("left out \(failure)") }
        if let first = opened.indexesNotWritten.first {
            TerminalText.warn(
                "could not write the index of \(opened.indexesNotWritten.count) versions read whole (\(first)); the next mount reads them whole again"
            )
        }
        // Heads merged as a pull merges them (in the temporary store only), so every backup of every device shows.
        let current = try await StoreCoordinator(store: opened.store).mergeHeads()?.id
        let whole = opened.versionsReadWhole
        let note =
            "\(opened.placedVersions + whole) versions; contents are read as they are needed"
            + (whole > 0
                ? " (\(whole) had no index and were read whole; \(opened.indexesWritten) were given one)" : "")
        try await serve(opened.store, current: current, named: "\(from) (\(note))", context: context)
    }

    /// Mounts `store` as of `current` and serves it until it is unmounted, on a thread of its own: each read may wait
    /// for a remote, and none of those waits may hold a thread of the concurrency pool.
    private func serve(_ store: Store, current: Version.ID?, named name: String, context: CommandContext) async throws {
        let mountPoint = self.mountPoint
        do {
            try await runBlocking {
                let filesystem = try MountedStore(
                    store: store, current: current, report: { TerminalText.warn("cannot read \($0)") })
                try FuseMount.serve(filesystem, at: mountPoint) {
                    context.writeLine(
                        "Mounted \(name) at \(mountPoint) (read-only); Ctrl-C or `fusermount3 -u \(mountPoint)` unmounts."
                    )
                }
            }
        } catch let failure as FuseMount.Failure {
            switch failure {
            case .notADirectory: throw CommandError.usage(failure.description)
            case .staleMountPoint, .mountFailed: throw CommandError.failed(failure.description)
            }
        }
        context.writeLine("Unmounted \(mountPoint).")
    }
}

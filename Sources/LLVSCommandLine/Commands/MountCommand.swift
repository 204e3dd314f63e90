import Foundation
import LLVS
import LLVSMount

/// `llvs mount`: the store's backups and versions as a read-only file system (`LLVSMount`), until Ctrl-C or
/// `fusermount3 -u`.
struct MountCommand: Command {
    static let name = "mount"
    static let summary =
        "Mount the store read-only at MOUNTPOINT: every kept backup of every source, every version's values, the heads; until Ctrl-C or `fusermount3 -u`."
    static let arguments = "MOUNTPOINT"
    static let positionalCount = 1...1
    static let examples = [
        "llvs mount /mnt/llvs    # then: ls /mnt/llvs/sources/home-me-Documents/latest/",
        "diff -r /mnt/llvs/sources/srv-data/2026-12-01T03:17:00Z /srv/data",
    ]

    let mountPoint: String
    var runsUntilStopped: Bool { true }

    init(_ arguments: ParsedArguments) throws {
        mountPoint = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let filesystem = try MountedStore(
            store: coordinator.store, current: await coordinator.currentVersionId,
            report: { TerminalText.warn("cannot read \($0)") })
        do {
            try FuseMount.serve(filesystem, at: mountPoint) {
                context.writeLine(
                    "Mounted \(context.storePath) at \(mountPoint) (read-only); Ctrl-C or `fusermount3 -u \(mountPoint)` unmounts."
                )
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

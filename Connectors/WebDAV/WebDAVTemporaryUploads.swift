import Foundation
import LLVS
import LLVSSupport

/// Where large bodies wait before they are moved into place: one folder, `.llvs-uploads/` at the top of the remote,
/// rather than beside each file. A process killed between the PUT and the MOVE leaves its temporary there, named after
/// it (`<pid>@<machine>-<random>-<name>`), and the first large upload of each later process lists that small folder
/// once and removes what was left: at once the temporaries of ended processes of this machine, and others' (the
/// remote may be shared with machines whose processes this one cannot see) once they are an hour old, since a body
/// being written is always recent. Beside each file, finding them would mean listing every folder written to.
extension WebDAVFileSystem {
    static let temporaryUploadsFolder = ".llvs-uploads"
    static let abandonedUploadAge: TimeInterval = 3600

    /// A fresh temporary path for a body bound for `path`, in a folder made sure of (and cleared of abandoned
    /// temporaries) once per file system.
    func temporaryUploadPath(for path: String) async throws -> String {
        try await temporaryUploadsReady.run(Self.temporaryUploadsFolder) { try await self.prepareTemporaryUploads() }
        let name = "\(TemporaryWriter.tag)-\(UUID().uuidString.prefix(8).lowercased())-\(try CloudPath.name(path))"
        return CloudPath.join(Self.temporaryUploadsFolder, name)
    }

    private func prepareTemporaryUploads() async throws {
        guard !temporaryUploadsPrepared.load(ordering: .acquiring) else { return }
        try await makeFolder(Self.temporaryUploadsFolder)
        // Best effort: a leftover that cannot be listed or removed now is removed by a later process.
        if let items = try? await list(Self.temporaryUploadsFolder) {
            let cutoff = Date().addingTimeInterval(-Self.abandonedUploadAge)
            for item in items where !item.isFolder {
                let writer = TemporaryWriter(Substring(item.name))
                let abandoned =
                    writer?.isGoneFromThisMachine == true
                    || (item.modified.map { $0 < cutoff } == true && writer?.isLiveHere != true)
                if abandoned { try? await removeFile(CloudPath.join(Self.temporaryUploadsFolder, item.name)) }
            }
        }
        temporaryUploadsPrepared.store(true, ordering: .releasing)
    }
}

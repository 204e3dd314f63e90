import Foundation
import LLVS
import LLVSConformance
import LLVSEncryption
import Synchronization
import Testing

/// Holds every `.create` upload until `parties` of them are waiting, then lets them all go at once: two devices'
/// first uses of an encrypted folder made to meet at the create, whatever the scheduling.
final class CreateBarrier: ForwardingFileSystem {
    let base: any CloudFileSystem
    let parties: Int
    private let state = Mutex<(waiting: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    init(_ base: any CloudFileSystem, parties: Int) {
        self.base = base
        self.parties = parties
    }

    func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        if mode == .create {
            await withCheckedContinuation { continuation in
                let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                    state.waiting += 1
                    state.waiters.append(continuation)
                    guard state.waiting >= parties else { return [] }
                    defer { state.waiters = [] }
                    return state.waiters
                }
                released.forEach { $0.resume() }
            }
        }
        try await base.upload(source, to: path, mode: mode)
    }
}

/// Two devices making an encrypted folder's key at the same moment, their creates of `encryption.json` released
/// together: on a remote that refuses a second create (`exclusiveCreate`) both end with one key, and the remote
/// holds that one alone.
public func expectOneKeyFromTwoFirstUses(
    on base: any CloudFileSystem, folder: String, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    #expect(
        base.capabilities.exclusiveCreate, "the remote should refuse a second create", sourceLocation: sourceLocation)
    let meeting = CreateBarrier(base, parties: 2)
    let first = RemoteKeyring(base: meeting, folder: folder, passphrase: "first use")
    let second = RemoteKeyring(base: meeting, folder: folder, passphrase: "first use")
    async let one = first.key()
    async let other = second.key()
    let keys = try await [one, other]
    #expect(keys[0] == keys[1], "the two devices should seal with one key", sourceLocation: sourceLocation)
    let kept = try await base.listNames(CloudPath.join(folder, RemoteKeyring.keysFolderName))
    #expect(kept.count == 1, "the remote should keep one key file, not \(kept)", sourceLocation: sourceLocation)
    try await base.removeFolder(folder)
}

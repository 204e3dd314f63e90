import Foundation
import LLVSSupport
import Synchronization

/// What a version's changes hold of released values: how many, their stored bytes, and the stored bytes of every
/// value they hold.
public struct ReleasedInChanges: Sendable, Equatable {
    public var values = 0
    public var releasedBytes: Int64 = 0
    public var bytes: Int64 = 0

    public init(values: Int = 0, releasedBytes: Int64 = 0, bytes: Int64 = 0) {
        self.values = values
        self.releasedBytes = releasedBytes
        self.bytes = bytes
    }
}

extension Store {
    /// What released values each version's changes (as `valueChanges(madeInVersionIdentifiedBy:)` gives them) hold:
    /// a changes file a remote holds carries their bytes, which it need not keep, until it is written again. One map
    /// difference per version, no value read; versions are compared on every processor. Versions missing from the
    /// answer hold none.
    public func releasedInChanges(among versions: [Version.ID]) throws -> [Version.ID: ReleasedInChanges] {
        let released = try releasedRecords()
        // Nothing released: no changes file holds a released value, and no version need be compared.
        guard !released.isEmpty else { return [:] }
        let found = Mutex([Version.ID: ReleasedInChanges]())
        let failure = Mutex<(any Error)?>(nil)
        DispatchQueue.concurrentPerform(iterations: versions.count) { index in
            guard failure.withLock({ $0 == nil }) else { return }
            do {
                let id = versions[index]
                var here = ReleasedInChanges()
                for change in try plannedChanges(madeInVersionIdentifiedBy: id) {
                    guard let entry = change.entry else { continue }
                    here.bytes += entry.data.length
                    if released.contains(entry.data) {
                        here.values += 1
                        here.releasedBytes += entry.data.length
                    }
                }
                found.withLock { $0[id] = here }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return found.withLock { $0 }
    }
}

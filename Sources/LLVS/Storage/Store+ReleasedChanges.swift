import Foundation
import LLVSSupport
import Synchronization

extension Store {
    /// How many released values each version's changes (as `valueChanges(madeInVersionIdentifiedBy:)` gives them)
    /// carry: a changes file a remote holds carries that many values' bytes it need not keep, until it is written
    /// again. One map difference per version, no value read; versions are compared on every processor.
    public func releasedValuesCarried(among versions: [Version.ID]) throws -> [Version.ID: Int] {
        let released = try releasedRecords()
        guard !released.isEmpty else { return Dictionary(uniqueKeysWithValues: versions.map { ($0, 0) }) }
        let counts = Mutex([Version.ID: Int]())
        let failure = Mutex<(any Error)?>(nil)
        DispatchQueue.concurrentPerform(iterations: versions.count) { index in
            guard failure.withLock({ $0 == nil }) else { return }
            do {
                let id = versions[index]
                let carried = try plannedChanges(madeInVersionIdentifiedBy: id).count { change in
                    change.entry.map { released.contains($0.data) } ?? false
                }
                counts.withLock { $0[id] = carried }
            } catch {
                failure.withLock { $0 = $0 ?? error }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return counts.withLock { $0 }
    }
}

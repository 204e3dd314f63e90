import Foundation
import LLVSSupport

extension Store {
    /// The versions whose changes (as `valueChanges(madeInVersionIdentifiedBy:)` gives them) carry a value whose
    /// record is released: those whose changes files a remote holds with bytes it need not keep. One map difference
    /// per version, no value read.
    public func versionsCarryingReleasedValues(among versions: [Version.ID]) throws -> [Version.ID] {
        let released = try releasedRecords()
        guard !released.isEmpty else { return [] }
        return try versions.filter { id in
            try plannedChanges(madeInVersionIdentifiedBy: id).contains { change in
                change.entry.map { released.contains($0.data) } ?? false
            }
        }
    }
}

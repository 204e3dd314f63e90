import Foundation

extension Store {
    /// Lays the stored records out again in less space (`CompactableStorage`), after a prune released some; every
    /// version reads as before. Nil for a storage that cannot.
    public func compactStorage() throws -> StorageCompaction? {
        guard let storage = storage as? any CompactableStorage else { return nil }
        return try storage.compact(versions: history.topologicallySorted().map(\.id), released: releasedRecords())
    }
}

import Foundation
import LLVS

/// The typed API upstream LLVS offers on its coordinator: models saved, read and removed at the current version.
extension StoreCoordinator {
    /// Saves `model` as the instance `instanceIdentifier` of its type, in a new version on top of the current one.
    @discardableResult
    public func save<M: StorableModel>(_ model: M, instanceIdentifier: String) throws -> Version {
        let id = try M.valueId(instanceIdentifier: instanceIdentifier)
        let value = Value(id: id, data: try ModelCoding.encode(model))
        return try save([try isPresent(id) ? .update(value) : .insert(value)])
    }

    /// The instance `instanceIdentifier` of `type` at the current version, or nil when there is none.
    public func fetchModel<M: StorableModel>(_ type: M.Type, instanceIdentifier: String) throws -> M? {
        let id = try M.valueId(instanceIdentifier: instanceIdentifier)
        guard let value = try value(id: id) else { return nil }
        return try ModelCoding.decode(M.self, from: value.data, valueId: id)
    }

    /// Every instance of `type` at the current version, by instance identifier order. This reads every value ID
    /// at the version (a full scan): for large stores, project the type (LLVSProjection) and query that instead.
    public func fetchAllModels<M: StorableModel>(_ type: M.Type) throws -> [M] {
        guard let current = currentVersionId else { return [] }
        let suffix = "/" + M.modelTypeIdentifier
        return try store.valueReferences(at: current)
            .filter { $0.valueId.rawValue.hasSuffix(suffix) && $0.valueId.rawValue.count > suffix.count }
            .sorted { $0.valueId < $1.valueId }
            .compactMap { reference in
                try store.value(storedAt: reference).map {
                    try ModelCoding.decode(M.self, from: $0.data, valueId: reference.valueId)
                }
            }
    }

    /// Removes the instance in a new version on top of the current one; nil (nothing saved) when there is none.
    @discardableResult
    public func removeModel<M: StorableModel>(_ type: M.Type, instanceIdentifier: String) throws -> Version? {
        let id = try M.valueId(instanceIdentifier: instanceIdentifier)
        guard try isPresent(id) else { return nil }
        return try save([.remove(id)])
    }

    /// Whether the current version holds the value, found in the map without reading its data.
    private func isPresent(_ id: Value.ID) throws -> Bool {
        try store.makeVersionBuilder(basedOn: currentVersionId).contains(id)
    }
}

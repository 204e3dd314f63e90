import Foundation
import LLVS
import Testing

/// Two stores edit concurrently and sync through `fileSystem` until they agree; a third starts from a snapshot.
public func convergeAndBootstrap(through fileSystem: any CloudFileSystem) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-sync-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    func coordinator(_ name: String) throws -> StoreCoordinator {
        try StoreCoordinator(store: try Store(creatingAt: folder.appendingPathComponent(name)))
    }
    let a = try coordinator("a"), b = try coordinator("b")
    func exchange(_ c: StoreCoordinator) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: c.store, fileSystem: fileSystem, basePath: "sync test")
    }
    for i in 0..<10 { try await a.save(inserting: [Value(id: Value.ID("a/\(i)"), data: Data("a\(i)".utf8))]) }
    try await b.save(inserting: [Value(id: "shared", data: Data("b".utf8))])
    _ = try await a.exchange(with: exchange(a))
    _ = try await b.exchange(with: exchange(b))
    try await a.save(updating: [Value(id: "shared", data: Data("a wins later".utf8))])
    _ = try await a.exchange(with: exchange(a))
    _ = try await b.exchange(with: exchange(b))
    let aValues = try await a.values().map { "\($0.id)=\(String(decoding: $0.data, as: UTF8.self))" }
    let bValues = try await b.values().map { "\($0.id)=\(String(decoding: $0.data, as: UTF8.self))" }
    #expect(aValues == bValues)
    #expect(aValues.contains("shared=a wins later"))
    let manifest = try await exchange(a).sendSnapshot()
    let c = try coordinator("c")
    #expect(try await c.bootstrapFromSnapshot(using: exchange(c)) == .restored(manifest))
    #expect(try await c.values().map { "\($0.id)=\(String(decoding: $0.data, as: UTF8.self))" } == aValues)
    try await fileSystem.removeFolder("sync test")
}

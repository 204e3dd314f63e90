import Foundation
import LLVSSupport

/// The small file that marks a folder as a store and says which storage holds its versions.
public struct StoreDescriptor: Codable, Sendable, Equatable {
    public static let fileName = "llvs-store.json"
    /// 2: value records may be compressed (`RecordEncoding`) and map leaves say each value's size. A build that reads
    /// only format 1 then stops at the descriptor with a clear message instead of meeting records it cannot read.
    /// Format 1 stores open as they are and become format 2 when this build opens them, before it writes anything.
    public static let currentFormat = 2

    public var format: Int
    public var storage: String

    public init(storage: String) {
        self.format = Self.currentFormat
        self.storage = storage
    }

    static func read(storeRoot: String) throws -> StoreDescriptor? {
        let path = storeRoot + "/" + fileName
        guard POSIX.fileExists(path) else { return nil }
        let data = try POSIX.readFile(path)
        let descriptor: StoreDescriptor
        do {
            descriptor = try JSONDecoder().decode(StoreDescriptor.self, from: data)
        } catch {
            throw StoreError.corruptFile(path: path, reason: "it is not a store descriptor (\(error))")
        }
        guard descriptor.format <= currentFormat else {
            throw StoreError.corruptFile(
                path: path,
                reason: "store format \(descriptor.format) is newer than this build reads (\(currentFormat))")
        }
        return descriptor
    }

    func write(storeRoot: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try POSIX.writeAtomically(try encoder.encode(self), to: storeRoot + "/" + Self.fileName)
    }
}

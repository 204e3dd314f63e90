import Foundation
import LLVSSupport

/// The small file that marks a folder as a store and says which storage holds its versions.
public struct StoreDescriptor: Codable, Sendable, Equatable {
    public static let fileName = "llvs-store.json"
    public static let currentFormat = 1

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

import Foundation

/// What a remote says about its own layout: `llvs-remote.json` beside `versions/`, `{"format":"compact","version":1}`.
/// Every device reads it before it reads or writes anything else, so all agree on one format, and a build that meets
/// a format (or a version of one) it does not know stops with `unsupportedRemoteFormat` instead of misreading files.
/// A remote without the record is in the upstream layout (what LLVS apps write, and every remote before the record).
public struct RemoteFormatRecord: Codable, Sendable, Equatable {
    public static let fileName = "llvs-remote.json"
    public static let upstream = "upstream"
    public static let compact = "compact"
    /// The versions of each format this build reads and writes.
    static let known = [upstream: 1, compact: 1]

    public var format: String
    public var version: Int

    public init(format: String, version: Int = 1) {
        self.format = format
        self.version = version
    }

    /// The codec of a format this build knows.
    public static func codec(named format: String) -> (any RemoteCodec)? {
        switch format {
        case upstream: UpstreamRemoteCodec()
        case compact: CompactRemoteCodec()
        default: nil
        }
    }

    /// The codec for the remote under `basePath`: the one its record names; without a record, upstream when it holds
    /// versions already (a remote LLVS apps or earlier builds wrote), else `preferred` (compact unless said), and
    /// recorded on the remote unless `mayWrite` is false (a look that changes nothing), so the next device finds it.
    /// - Throws: `ExchangeError.unsupportedRemoteFormat` for a record this build cannot read,
    ///   `remoteFormatMismatch` when `required` differs from what the remote holds.
    public static func settle(
        on fileSystem: any CloudFileSystem, basePath: String, preferred: String? = nil, required: String? = nil,
        mayWrite: Bool = true
    ) async throws -> any RemoteCodec {
        let path = CloudPath.join(basePath, fileName)
        let wanted = required ?? preferred ?? compact
        var format: String
        if let record = try await read(from: fileSystem, at: path) {
            format = record.format
        } else {
            // A remote that holds versions without a record was written by LLVS apps or an earlier build.
            format = try await holdsVersions(fileSystem, basePath: basePath) ? upstream : wanted
            guard known[format] != nil else {
                throw ExchangeError.unsupportedRemoteFormat(path: path, format: format, version: 1)
            }
            // Recorded so the next look is one read, and every device agrees. LLVS apps ignore the file.
            if mayWrite {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                try await fileSystem.upload(try encoder.encode(RemoteFormatRecord(format: format)), to: path)
                // Read back: a device that settled the same empty remote a moment before with another format may have
                // written in between; the record that stays is the one every device then uses. (No file system here
                // can create a file only if it is absent, so two devices may still each write one format in the same
                // instant; every codec reads changes files of both, so nothing is misread.)
                if let stored = try await read(from: fileSystem, at: path), known[stored.format] != nil {
                    format = stored.format
                }
            }
        }
        if let required, required != format {
            throw ExchangeError.remoteFormatMismatch(path: path, holds: format, asked: required)
        }
        return codec(named: format)!
    }

    /// The record at `path`; nil when there is none.
    static func read(from fileSystem: any CloudFileSystem, at path: String) async throws -> RemoteFormatRecord? {
        let data: Data
        do {
            data = try await fileSystem.download(path)
        } catch CloudFileSystemError.notFound {
            return nil
        }
        let record: RemoteFormatRecord
        do {
            record = try JSONDecoder().decode(RemoteFormatRecord.self, from: data)
        } catch {
            throw ExchangeError.malformedFile(path: path, reason: RemoteFormat.describe(error))
        }
        guard let newest = known[record.format], record.version <= newest, record.version >= 1 else {
            throw ExchangeError.unsupportedRemoteFormat(path: path, format: record.format, version: record.version)
        }
        return record
    }

    private static func holdsVersions(_ fileSystem: any CloudFileSystem, basePath: String) async throws -> Bool {
        let versions = CloudPath.join(basePath, RemoteFormat.versionsFolder)
        guard try await fileSystem.exists(versions) else { return false }
        return try await fileSystem.listNames(versions).contains { !$0.hasPrefix(".") }
    }
}

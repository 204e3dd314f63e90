import Foundation
import LLVS
import LLVSOneDrive
import LLVSConformance
import Testing

/// A local folder that refuses OneDrive's characters, and a connector over it that encodes names as OneDrive's
/// will: what the suite must see pass, and fail when the encoding is not applied.
struct RefusingFolder: CloudFileSystem {
    let base: LocalFolderFileSystem
    let encoding: NameEncoding?

    var capabilities: CloudCapabilities { CloudCapabilities(checksums: [], nameEncoding: encoding) }

    func stored(_ path: String) throws -> String {
        let components = try CloudPath.components(path).map { encoding?.encode($0) ?? $0 }
        for component in components
        where component.contains(where: OneDriveFileSystem.nameEncoding.forbidden.contains)
            || component.hasSuffix(".") || component.hasSuffix(" ") || component.hasPrefix(" ")
        {
            throw CloudFileSystemError.server(status: 400, message: "the service refuses the name \(component)")
        }
        return components.joined(separator: "/")
    }

    func shown(_ item: CloudItem) -> CloudItem {
        var item = item
        item.name = encoding?.decode(item.name) ?? item.name
        return item
    }

    func exists(_ path: String) async throws -> Bool { try await base.exists(try stored(path)) }
    func list(_ folder: String) async throws -> [CloudItem] { try await base.list(try stored(folder)).map(shown) }
    func listNames(_ folder: String) async throws -> [String] { try await namesFromListing(folder) }
    func metadata(_ path: String) async throws -> CloudItem { shown(try await base.metadata(try stored(path))) }
    func stager(for path: String) async throws -> FileStager { .plain }
    func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await base.upload(source, to: try stored(path), mode: mode)
    }
    func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await base.read(try stored(path), range: range)
    }
    func download(_ path: String, to destination: DownloadDestination) async throws {
        try await base.download(try stored(path), to: destination)
    }
    func makeFolder(_ path: String) async throws { try await base.makeFolder(try stored(path)) }
    func removeFile(_ path: String) async throws { try await base.removeFile(try stored(path)) }
    func removeFolder(_ path: String) async throws { try await base.removeFolder(try stored(path)) }
}

@Suite struct CapabilityConformanceTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-capabilities-\(UUID().uuidString)")

    func run(_ encoding: NameEncoding?) async throws -> ConformanceReport {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var options = ConformanceOptions()
        options.listingCount = 20
        options.largeFileSize = 1024
        return await ConformanceSuite.run(
            on: RefusingFolder(base: LocalFolderFileSystem(root: root), encoding: encoding), options: options)
    }

    /// The suite adds names with every character the declared encoding handles, and its look-alikes: an encoding
    /// connector passes, and stores none of the refused characters.
    @Test func aDeclaredNameEncodingIsTestedWithEveryCharacterItHandles() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try await run(OneDriveFileSystem.nameEncoding)
        #expect(report.allPassed, "\(report.table)")
        #expect(report.results.first { $0.id == "names" }?.status == .passed)
    }

    @Test func aServiceThatRefusesNamesFailsTheNamesCheckWithoutAnEncoding() async throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let report = try await run(nil)
        #expect(report.results.first { $0.id == "names" }?.status == .failed)
    }
}

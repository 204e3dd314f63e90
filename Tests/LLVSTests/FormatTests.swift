import Foundation
import Testing
@testable import LLVS

/// The JSON encodings of docs/remote-format.md, checked against the example remote LLVS itself wrote.
@Suite struct FormatTests {
    let remote = TestPaths.exampleRemote
    let v1 = Version.ID("00000000-0000-0000-0000-000000000001")
    let v2 = Version.ID("00000000-0000-0000-0000-000000000002")
    let v3 = Version.ID("00000000-0000-0000-0000-000000000003")
    let v4 = Version.ID("00000000-0000-0000-0000-000000000004")

    func file(_ folder: String, _ id: Version.ID) throws -> Data {
        try Data(contentsOf: remote.appendingPathComponent(folder).appendingPathComponent(id.rawValue))
    }

    @Test func decodesEveryVersionFile() throws {
        let root = try RemoteFormat.decodeVersion(try file("versions", v1), path: "v1")
        #expect(root.id == v1)
        #expect(root.predecessors == nil)
        #expect(root.timestamp == 800000000)
        #expect(root.valueDataSize == 9)
        #expect(root.metadata.isEmpty)

        let branch = try RemoteFormat.decodeVersion(try file("versions", v3), path: "v3")
        #expect(branch.predecessors == Version.Predecessors(idOfFirst: v1))
        #expect(branch.branch == Branch("import"))
        #expect(branch.metadata[.branch]?.data == Data(#""import""#.utf8))

        let merge = try RemoteFormat.decodeVersion(try file("versions", v4), path: "v4")
        #expect(merge.predecessors == Version.Predecessors(idOfFirst: v2, idOfSecond: v3))
        #expect(merge.isMerge)
        #expect(merge.valueDataSize == 0)
    }

    @Test func decodesEveryChangesFile() throws {
        let root = try RemoteFormat.decodeChanges(try file("changes", v1), path: "c1")
        #expect(
            root == [
                .insert(Value(id: "alpha", data: Data("one".utf8), storedVersionId: v1)),
                .insert(Value(id: "beta", data: Data("two".utf8), storedVersionId: v1)),
                .insert(Value(id: "notes/today", data: Data([0x00, 0xff, 0x10]), storedVersionId: v1)),
            ])
        #expect(
            try RemoteFormat.decodeChanges(try file("changes", v2), path: "c2") == [
                .update(Value(id: "alpha", data: Data("uno".utf8), storedVersionId: v2)), .remove("beta"),
            ])
        #expect(
            try RemoteFormat.decodeChanges(try file("changes", v4), path: "c4") == [
                .preserve(Value.Reference(valueId: "alpha", storedVersionId: v3)),
                .preserveRemoval("beta"),
                .preserve(Value.Reference(valueId: "gamma", storedVersionId: v3)),
            ])
    }

    @Test func reEncodingGivesTheSameParsedJSON() throws {
        for id in [v1, v2, v3, v4] {
            let versionData = try file("versions", id)
            let version = try RemoteFormat.decodeVersion(versionData, path: id.rawValue)
            #expect(try parsedJSON(RemoteFormat.encodeVersion(version)) == parsedJSON(versionData))

            let changesData = try file("changes", id)
            let changes = try RemoteFormat.decodeChanges(changesData, path: id.rawValue)
            #expect(try parsedJSON(RemoteFormat.encodeChanges(changes)) == parsedJSON(changesData))
        }
    }

    @Test func acceptsBothSlashSpellingsAndIntegerTimestamps() throws {
        let escaped = #"[{"insert":{"data":"AA==","id":"a\/b"}}]"#
        let plain = #"[{"insert":{"data":"AA==","id":"a/b"}}]"#
        #expect(
            try RemoteFormat.decodeChanges(Data(escaped.utf8), path: "x")
                == RemoteFormat.decodeChanges(Data(plain.utf8), path: "y"))
        let version = #"{"version":{"identifier":"x","timestamp":12.5}}"#
        let decoded = try RemoteFormat.decodeVersion(Data(version.utf8), path: "v")
        #expect(decoded.timestamp == 12.5)
        #expect(decoded.metadata.isEmpty)
        #expect(decoded.valueDataSize == nil)
    }

    @Test func encodesLikeLLVS() throws {
        let version = Version(
            id: "v", predecessors: .init(idOfFirst: "p"), timestamp: 800000000, valueDataSize: 3,
            metadata: [.branch: try .init("import")])
        let json = String(decoding: try RemoteFormat.encodeVersion(version), as: UTF8.self)
        #expect(
            json
                == #"{"version":{"identifier":"v","metadata":["__llvs_branch",{"data":"ImltcG9ydCI="}],"predecessors":{"idOfFirst":"p"},"timestamp":800000000,"valueDataSize":3}}"#
        )
        let change = String(
            decoding: try RemoteFormat.encodeChanges([.insert(Value(id: "a", data: Data([0, 255, 16])))]), as: UTF8.self
        )
        #expect(change == #"[{"insert":{"data":"AP8Q","id":"a"}}]"#)
    }

    @Test func decodesTheSnapshotManifestExample() throws {
        let data = try Data(contentsOf: remote.appendingPathComponent("snapshots/manifest.json"))
        let object = try parsedJSON(data) as! [String: Any]
        #expect(object["snapshotId"] as? String == "00000000-0000-0000-0000-0000000000A1")
        // Read as the exchange reads it: the type, then its own checks.
        let manifest = try JSONDecoder().decode(SnapshotManifest.self, from: data)
        #expect(manifest.snapshotId == "00000000-0000-0000-0000-0000000000A1")
        #expect(manifest.format == object["format"] as? String)
        #expect(manifest.chunkCount == object["chunkCount"] as? Int)
        #expect(manifest.totalSize == (object["totalSize"] as? NSNumber)?.int64Value)
        #expect(manifest.versionCount == object["versionCount"] as? Int)
        #expect(manifest.sha256 == object["sha256"] as? String)
    }

    @Test func malformedFilesAreNamed() throws {
        #expect(
            throws: ExchangeError.malformedFile(path: "versions/bad", reason: "missing key \"identifier\" at version")
        ) {
            try RemoteFormat.decodeVersion(Data(#"{"version":{"timestamp":1}}"#.utf8), path: "versions/bad")
        }
        #expect(throws: ExchangeError.self) {
            try RemoteFormat.decodeChanges(Data(#"[{"explode":1}]"#.utf8), path: "changes/bad")
        }
        #expect(throws: ExchangeError.self) {
            try RemoteFormat.decodeChanges(Data("not json".utf8), path: "changes/bad")
        }
    }
}

import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// The readers a pull uses for a remote's version and changes files, against JSONDecoder, the reference: where they
/// answer they agree, and what they do not take (nil) is left to JSONDecoder, whose result or error then stands.
@Suite struct RemoteFileFastDecodingTests {
    static func randomChange(_ generator: inout SeededGenerator) -> Value.Change {
        let id = Value.ID(
            Bool.random(using: &generator)
                ? UUID().uuidString : "notes/ünï \"quoted\" \\ \(Int.random(in: 0...99, using: &generator))")
        let data = Data(
            (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let stored: Version.ID? = Bool.random(using: &generator) ? .random() : nil
        return switch Int.random(in: 0..<5, using: &generator) {
        case 0: .insert(Value(id: id, data: data, storedVersionId: stored))
        case 1: .update(Value(id: id, data: data, storedVersionId: stored))
        case 2: .remove(id)
        case 3: .preserve(Value.Reference(valueId: id, storedVersionId: .random()))
        default: .preserveRemoval(id)
        }
    }

    @Test func changesAgreeWithJSONDecoderOnWhatLLVSWrites() throws {
        var generator = SeededGenerator(seed: 11)
        for _ in 0..<300 {
            let changes = (0..<Int.random(in: 0..<6, using: &generator)).map { _ in Self.randomChange(&generator) }
            let data = try RemoteFormat.encodeChanges(changes)
            let fast = try #require(
                Value.Change.fastDecodedList(from: data), "\(String(decoding: data, as: UTF8.self))")
            #expect(fast == changes)
            #expect(fast == (try JSONDecoder().decode([Value.Change].self, from: data)))
        }
    }

    @Test(arguments: [
        #"[]"#,
        #" [ { "insert" : { "id" : "a\/b" , "data" : "aGk=" , "extra" : [1, null] } } , {"remove":"x"} ] "#,
        #"[{"future":{"x":1},"preserve":{"storedVersionId":"V","valueId":"a"}},{"preserveRemoval":"\u00e9"}]"#,
        #"[{"update":{"data":"","id":"e","storedVersionId":"V"}}]"#,
    ])
    func changesAgreeOnHandWrittenFiles(json: String) throws {
        let data = Data(json.utf8)
        #expect(Value.Change.fastDecodedList(from: data) == (try JSONDecoder().decode([Value.Change].self, from: data)))
    }

    /// Shapes left to JSONDecoder (which takes some of them by its own rules and refuses others with its message).
    @Test(arguments: [
        #"[{"insert":{"id":"a","data":"aGk="},"update":{"id":"a","data":"aGk="}}]"#,
        #"[{"insert":null,"remove":"a"}]"#,
        #"[{"insert":{"id":"a","id":"b","data":"aGk="}}]"#,
        #"[{"insert":{"id":"a","data":"not base64!"}}]"#,
        #"[{"insert":{"data":"aGk="}}]"#,
        #"[{"preserve":{"valueId":"a"}}]"#,
        #"[{"remove":5}]"#,
        #"[{}]"#,
        #"[] extra"#,
        #"{"remove":"a"}"#,
        "",
    ])
    func changesLeaveOtherShapesToJSONDecoder(json: String) {
        #expect(Value.Change.fastDecodedList(from: Data(json.utf8)) == nil)
    }

    @Test func aVersionFileAgreesWithJSONDecoder() throws {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<200 {
            let version = try VersionFastDecodingTests.randomVersion(&generator)
            let data = try JSONEncoder().encode(["version": version])
            let fast = try #require(
                Version.fastDecodedRemoteFile(from: data), "\(String(decoding: data, as: UTF8.self))")
            #expect(fast == version)
            #expect(fast == (try JSONDecoder().decode([String: Version].self, from: data))["version"])
        }
    }

    @Test(arguments: [
        #"{"version":{"identifier":"A","timestamp":1},"other":1}"#,
        #"{"version":{"identifier":"A","timestamp":1},"version":{"identifier":"B","timestamp":1}}"#,
        #"{"version":null}"#,
        #"{}"#,
        #"{"identifier":"A","timestamp":1}"#,
    ])
    func versionFilesLeaveOtherShapesToJSONDecoder(json: String) throws {
        #expect(Version.fastDecodedRemoteFile(from: Data(json.utf8)) == nil)
    }

    /// What a reader refuses still gets the reference's error, naming the file.
    @Test func aMalformedFileStillSaysWhatAndWhere() {
        #expect(throws: ExchangeError.self) {
            try RemoteFormat.decodeChanges(Data(#"[{"insert":{"data":"aGk="}}]"#.utf8), path: "changes/V")
        }
        #expect(throws: ExchangeError.self) {
            try RemoteFormat.decodeVersion(Data(#"{"version":{"identifier":"A"}}"#.utf8), path: "versions/V.json")
        }
    }
}

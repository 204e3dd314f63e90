import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// The version file reader an import uses against JSONDecoder, the reference: where it answers it agrees, and
/// what it does not take (nil) is left to JSONDecoder.
@Suite struct VersionFastDecodingTests {
    static func randomVersion(_ generator: inout SeededGenerator) throws -> Version {
        let predecessors: Version.Predecessors? =
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: nil
            case 1: .init(idOfFirst: .random())
            default: .init(idOfFirst: .random(), idOfSecond: .random())
            }
        var metadata = Version.Metadata()
        for index in 0..<Int.random(in: 0..<3, using: &generator) {
            metadata[Version.MetadataKey(index == 0 ? "__llvs_branch" : "key/\(index) ☕")] = try Version.MetadataValue(
                "value \(index) \"quoted\"")
        }
        return Version(
            id: Version.ID(UUID().uuidString), predecessors: predecessors,
            timestamp: Bool.random(using: &generator)
                ? Double(Int.random(in: 0...900_000_000, using: &generator))
                : Double.random(in: 0...900_000_000, using: &generator),
            valueDataSize: Bool.random(using: &generator) ? Int64.random(in: 0...1 << 40, using: &generator) : nil,
            metadata: metadata)
    }

    @Test func agreesWithJSONDecoderOnWhatLLVSWrites() throws {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<500 {
            let data = try JSONEncoder().encode(try Self.randomVersion(&generator))
            let fast = try #require(Version.fastDecoded(from: data), "\(String(decoding: data, as: UTF8.self))")
            #expect(
                fast == (try JSONDecoder().decode(Version.self, from: data)), "\(String(decoding: data, as: UTF8.self))"
            )
        }
    }

    @Test(arguments: [
        // The fixture's shape, an integer timestamp, escapes, whitespace, unknown members, an absent metadata.
        #"{"valueDataSize":9,"metadata":[],"timestamp":800000000,"identifier":"00000000-0000-0000-0000-000000000001"}"#,
        #"{ "identifier" : "A\/B\u00e9" , "timestamp" : -1.5e3 , "predecessors" : { "idOfFirst" : "P" , "other" : [1, {"x": null}] } }"#,
        #"{"identifier":"A","timestamp":0.1,"metadata":["k",{"data":"ImltcG9ydCI=","extra":true},"k",{"data":"Ig=="}]}"#,
        #"{"identifier":"A","timestamp":1E+2,"future":{"nested":[true,false,null]}}"#,
    ])
    func agreesOnHandWrittenFiles(json: String) throws {
        let data = Data(json.utf8)
        #expect(Version.fastDecoded(from: data) == (try JSONDecoder().decode(Version.self, from: data)))
    }

    /// Shapes it leaves to JSONDecoder (which may take them or refuse them with its own message).
    @Test(arguments: [
        #"{"identifier":"A","timestamp":1,"predecessors":null}"#,
        #"{"identifier":"A","identifier":"B","timestamp":1}"#,
        #"{"identifier":"A","timestamp":1,"valueDataSize":9.0}"#,
        #"{"identifier":"A","timestamp":01}"#,
        #"{"identifier":"A","timestamp":1,"metadata":["k"]}"#,
        #"{"identifier":"A","timestamp":1,"metadata":["k",{"data":"not base64!"}]}"#,
        #"{"identifier":"A"}"#,
        #"{"identifier":"A","timestamp":1} extra"#,
        #"{"identifier":"A","timestamp":"1"}"#,
        #"["identifier"]"#,
        "",
    ])
    func leavesOtherShapesToJSONDecoder(json: String) {
        #expect(Version.fastDecoded(from: Data(json.utf8)) == nil)
    }
}

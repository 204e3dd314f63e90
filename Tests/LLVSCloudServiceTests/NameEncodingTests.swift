import Foundation
import LLVS
import LLVSOneDrive
import Testing

@Suite struct NameEncodingTests {
    let encoding = OneDriveFileSystem.nameEncoding

    @Test func forbiddenCharactersBecomeLookAlikesAndComeBack() {
        #expect(encoding.encode("a:b?.txt") == "a\u{FF1A}b\u{FF1F}.txt")
        #expect(encoding.encode(" lead") == "\u{2420}lead")
        #expect(encoding.encode("trail ") == "trail\u{2420}")
        #expect(encoding.encode("dot.") == "dot\u{FF0E}")
        #expect(encoding.encode("plain name.txt") == "plain name.txt")
        #expect(encoding.encode("mid dle.x") == "mid dle.x")
    }

    /// Names that already hold the look-alikes are quoted, so no two names encode alike and every one decodes back.
    @Test func everyNameRoundTripsAndNoTwoCollide() {
        let names = [
            "a:b", "a\u{FF1A}b", "a\u{201B}b", "a\u{201B}\u{FF1A}b", " x ", "\u{2420}x\u{2420}", "end.", "end\u{FF0E}",
            "\"*:<>?\\|", "\u{FF02}\u{FF0A}", "..", ". .", "\u{201B}", "normal", "世界 😀", "x\u{201B}",
        ]
        var seen: [String: String] = [:]
        for name in names {
            let encoded = encoding.encode(name)
            #expect(encoding.decode(encoded) == name, "\(name) → \(encoded)")
            #expect(
                !encoded.contains { encoding.forbidden.contains($0) }, "\(encoded) still holds a forbidden character")
            #expect(!encoded.hasPrefix(" ") && !encoded.hasSuffix(" ") && !encoded.hasSuffix("."), "\(encoded)")
            #expect(seen[encoded] == nil, "\(name) and \(seen[encoded] ?? "") both encode to \(encoded)")
            seen[encoded] = name
        }
    }
}

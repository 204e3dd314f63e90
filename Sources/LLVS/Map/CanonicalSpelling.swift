import Foundation

/// One meaning per value ID. Swift strings that are canonically equivalent are equal (`"café"` composed or
/// decomposed), and so are value IDs, as in LLVS; the map must agree, so a value ID is placed and kept by its
/// canonical spelling: NFC (canonical composition), which an ASCII ID already is. An ID given in another spelling
/// reaches the same value, and the map keeps the NFC spelling.
///
/// Maps written by earlier builds placed an ID by the hash of the bytes it was given in, so a non-NFC ID can sit
/// where its own bytes hash (and, in a map that was large enough to branch, a composed and a decomposed spelling
/// could both be there, as two values). Reading looks there too (`legacySpellings(besides:)`); writing an ID removes what
/// an earlier build left at those places, so the next version of such a store holds the ID once, under NFC.
extension Value.ID {
    /// The spelling the map keeps and hashes.
    var canonical: Value.ID {
        rawValue.utf8.allSatisfy({ $0 < 0x80 }) ? self : Value.ID(rawValue.precomposedStringWithCanonicalMapping)
    }

    /// The spellings, other than `canonical` (this ID's canonical spelling, made by the caller), under which an
    /// earlier build may have placed this ID: the decomposed one (what Apple devices give) and the one given here.
    /// Empty for an ASCII ID.
    func legacySpellings(besides canonical: String) -> [String] {
        guard !rawValue.utf8.allSatisfy({ $0 < 0x80 }) else { return [] }
        var spellings: [String] = []
        for spelling in [rawValue.decomposedStringWithCanonicalMapping, rawValue]
        where !spelling.utf8.elementsEqual(canonical.utf8)
            && !spellings.contains(where: { $0.utf8.elementsEqual(spelling.utf8) })
        {
            spellings.append(spelling)
        }
        return spellings
    }

    /// Whether the two are the same bytes (not only canonically equivalent).
    func isSpelled(as other: String) -> Bool { rawValue.utf8.elementsEqual(other.utf8) }
}

/// How the shared caches key a path: its components joined by `/`, lowercased for a service whose names ignore
/// case and composed (NFC) for one that takes canonically equivalent names for one, so the folder cache and the ID
/// cache agree on which spellings name one item. Every other difference counts: a key is written in ASCII (other
/// scalars as `\u{…}`), because Swift compares strings by canonical equivalence and would take a composed and a
/// decomposed `é` for one key where the service (Drive, pCloud, a Linux disk) keeps two files.
public struct PathKeys: Sendable {
    /// Whether names differing only in case are one name.
    public let caseInsensitive: Bool
    /// Whether canonically equivalent names (NFC, NFD) are one name.
    public let canonicallyEquivalentNamesCollide: Bool

    public init(caseInsensitive: Bool, canonicallyEquivalentNamesCollide: Bool = false) {
        self.caseInsensitive = caseInsensitive
        self.canonicallyEquivalentNamesCollide = canonicallyEquivalentNamesCollide
    }

    /// The key of a path: its components as the service compares them, byte for byte.
    public func key(_ components: some Collection<String>) -> String {
        var joined = components.joined(separator: "/")
        if canonicallyEquivalentNamesCollide { joined = joined.precomposedStringWithCanonicalMapping }
        if caseInsensitive { joined = joined.lowercased() }
        guard !joined.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "\\") }) else { return joined }
        var ascii = ""
        for scalar in joined.unicodeScalars {
            if scalar.isASCII, scalar != "\\" {
                ascii.unicodeScalars.append(scalar)
            } else {
                ascii += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return ascii
    }

    /// Whether two names are one name under these rules (never by Swift's `==`, which takes canonically equivalent
    /// spellings for one).
    public func sameName(_ a: String, _ b: String) -> Bool { key(CollectionOfOne(a)) == key(CollectionOfOne(b)) }

    /// Whether `key` names `prefix` or something below it (everything is below the root's empty key).
    public func key(_ key: String, isAtOrBelow prefix: String) -> Bool {
        prefix.isEmpty || key == prefix || key.hasPrefix(prefix + "/")
    }
}

import LLVSSupport
/// A string identifier, encoded as a bare JSON string as LLVS does.
///
/// Version and value identifiers are distinct types so one cannot be passed where the other is meant.
public protocol StringIdentifier: RawRepresentable, Hashable, Comparable, Codable, Sendable,
    CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String {
    init(_ rawValue: String)
}

extension StringIdentifier {
    public init(rawValue: String) { self.init(rawValue) }
    public init(stringLiteral value: String) { self.init(value) }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

import LLVSSupport
/// A named line of work. Versions saved on a branch carry its name in their metadata.
public struct Branch: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var name: String
    /// A branch by its name.
    public init(_ name: String) { self.name = name }
    /// A branch named by a string literal.
    public init(stringLiteral value: String) { self.name = value }
    public var description: String { name }
}

import Foundation

/// A name or path as a dictionary key compared byte for byte. Swift's `String` compares by canonical equivalence,
/// so as a key it takes a composed `é` and `e` + U+0301 for one name, which a Linux disk (Apache, nginx, rclone) and
/// Drive keep apart; a mock that folds names the way its service does says so by what it puts in the key.
public struct MockNameKey: Hashable, Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }

    public static func == (a: MockNameKey, b: MockNameKey) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }

    public func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
        hasher.combine(0xFF as UInt8)
    }
}

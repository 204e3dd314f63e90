import Foundation
import LLVSCloudService

/// The kinds of remote a build of `llvs` knows. The commands take it as a value, so a program may run the same
/// commands with a kind of its own (the tests add one backed by a local folder).
public struct ConnectorRegistry: Sendable {
    public private(set) var kinds: [ConnectorKind]

    public init(_ kinds: [ConnectorKind]) {
        self.kinds = []
        for kind in kinds { self = self.adding(kind) }
    }

    /// This registry with one more kind; a kind whose name or scheme is taken already is a programming error.
    public func adding(_ kind: ConnectorKind) -> ConnectorRegistry {
        precondition(
            !kinds.contains { $0.name == kind.name || !Set($0.schemes).isDisjoint(with: kind.schemes) },
            "two connector kinds claim the scheme of \(kind.name)")
        var copy = self
        copy.kinds.append(kind)
        return copy
    }

    public func kind(named name: String) -> ConnectorKind? { kinds.first { $0.name == name } }
    func kind(scheme: String) -> ConnectorKind? { kinds.first { $0.schemes.contains(scheme.lowercased()) } }

    /// The URL forms of every kind, for errors.
    var urlForms: String { kinds.map(\.urlForm).joined(separator: ", ") }

    /// The kind a remote URL names, the URL checked against the kind's form.
    func parse(_ text: String) throws -> (ConnectorKind, URL) {
        guard let url = URL(string: text), let scheme = url.scheme else {
            throw CommandError.usage("\(text) is not a remote URL; use \(urlForms)")
        }
        guard let kind = kind(scheme: scheme) else {
            throw CommandError.usage("remotes of kind \(scheme): are not supported; use \(urlForms)")
        }
        try kind.checkURL(url, text: text)
        return (kind, url)
    }

    /// Every option any kind takes, once by name, for parsing; which kind takes which is checked after.
    var allOptions: [ConnectorOption] {
        var seen = Set<String>()
        return kinds.flatMap(\.allOptions).filter { seen.insert($0.name).inserted }
    }

    var allSecrets: [ConnectorSecret] {
        var seen = Set<String>()
        return kinds.compactMap(\.secret).filter { seen.insert($0.name).inserted }
    }
}

import Foundation
import LLVS

/// How log and heads show a version, as text and as JSON.
struct VersionSummary: Encodable {
    var id: String
    var date: String
    var predecessors: [String]
    var branch: String?
    var valueDataSize: Int64?
    var current: Bool

    init(_ version: Version, current: Version.ID?) {
        id = version.id.rawValue
        date = Self.format(version.date)
        predecessors = version.predecessors?.ids.map(\.rawValue) ?? []
        branch = version.branch?.name
        valueDataSize = version.valueDataSize
        self.current = version.id == current
    }

    var line: String {
        var text = "\(current ? "*" : " ") \(id)  \(date)"
        if let branch { text += "  [\(branch)]" }
        if predecessors.count == 2 {
            text += "  merge of \(predecessors[0].prefix(8)) and \(predecessors[1].prefix(8))"
        }
        return text
    }

    static func format(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

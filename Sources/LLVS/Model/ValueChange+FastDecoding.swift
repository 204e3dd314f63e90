import Foundation
import LLVSSupport

extension Value.Change {
    /// A changes file read by `JSONByteReader` rather than JSONDecoder: a pull reads one per version, and the
    /// general decoder's cost per file would be a large part of a full pull's own time. It takes the shape LLVS writes
    /// (each change an object with one of `insert`, `update`, `remove`, `preserve`, `preserveRemoval`; a value's
    /// `id`, base64 `data` and `storedVersionId`; unknown members skipped) and gives nil for anything else (two
    /// change keys in one object, a `null`, a repeated member, bad base64), which the caller then decodes with
    /// JSONDecoder, the reference, for its result or its error.
    static func fastDecodedList(from data: Data) -> [Value.Change]? {
        var reader = JSONByteReader(bytes: [UInt8](data))
        var changes: [Value.Change] = []
        do {
            try reader.array { reader in changes.append(try reader.llvsChange()) }
        } catch {
            return nil
        }
        return reader.isAtEnd() ? changes : nil
    }
}

extension JSONByteReader {
    fileprivate mutating func llvsChange() throws -> Value.Change {
        var change: Value.Change?
        try object { reader, name in
            let decoded: Value.Change
            if name == "insert" {
                decoded = .insert(try reader.llvsValue())
            } else if name == "update" {
                decoded = .update(try reader.llvsValue())
            } else if name == "remove" {
                decoded = .remove(Value.ID(try reader.string()))
            } else if name == "preserve" {
                decoded = .preserve(try reader.llvsReference())
            } else if name == "preserveRemoval" {
                decoded = .preserveRemoval(Value.ID(try reader.string()))
            } else {
                try reader.skipValue()
                return
            }
            // Which of two keys wins is the reference decoder's rule; leave such an object to it.
            guard change == nil else { throw NotTheUsualShape() }
            change = decoded
        }
        guard let change else { throw NotTheUsualShape() }
        return change
    }

    private mutating func llvsValue() throws -> Value {
        let members = try llvsStringMembers(["id", "data", "storedVersionId"])
        guard let id = members[0], let base64 = members[1], let data = Data(base64Encoded: base64) else {
            throw NotTheUsualShape()
        }
        return Value(id: Value.ID(id), data: data, storedVersionId: members[2].map(Version.ID.init))
    }

    private mutating func llvsReference() throws -> Value.Reference {
        let members = try llvsStringMembers(["valueId", "storedVersionId"])
        guard let id = members[0], let stored = members[1] else { throw NotTheUsualShape() }
        return Value.Reference(valueId: Value.ID(id), storedVersionId: Version.ID(stored))
    }
}

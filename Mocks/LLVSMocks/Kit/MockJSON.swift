import Foundation

/// Writes the `[String: Any]` trees mocks answer with as JSON, several times faster than JSONSerialization on
/// Linux (which bridges every value through NSNumber and NSString): a 10,000-item listing is most of a mock's
/// answer time, and that time would otherwise show up in the benchmarks as the connector's.
enum MockJSON {
    static func data(_ value: Any, sortedKeys: Bool = false) -> Data? {
        var out = ""
        out.reserveCapacity(256)
        guard write(value, into: &out, sortedKeys: sortedKeys) else { return nil }
        return Data(out.utf8)
    }

    private static func write(_ value: Any, into out: inout String, sortedKeys: Bool) -> Bool {
        // Native values by their exact type first: `as?` would bridge a native Int to NSNumber and back.
        let kind = type(of: value)
        if kind == String.self { escape(value as! String, into: &out); return true }
        if kind == Int.self { out += String(value as! Int); return true }
        if kind == Bool.self { out += (value as! Bool) ? "true" : "false"; return true }
        if kind == Int64.self { out += String(value as! Int64); return true }
        if kind == UInt64.self { out += String(value as! UInt64); return true }
        if kind == Int32.self { out += String(value as! Int32); return true }
        if kind == UInt32.self { out += String(value as! UInt32); return true }
        if kind == Double.self {
            let number = value as! Double
            guard number.isFinite else { return false }
            out += number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
            return true
        }
        if kind == [String: Any].self {
            return writeObject(value as! [String: Any], into: &out, sortedKeys: sortedKeys)
        }
        if kind == [Any].self { return writeArray(value as! [Any], into: &out, sortedKeys: sortedKeys) }
        // Anything else by cast; a number last, as casting a collection to NSNumber bridges it to Foundation first.
        switch value {
        case let object as [String: Any]: return writeObject(object, into: &out, sortedKeys: sortedKeys)
        case let array as [Any]: return writeArray(array, into: &out, sortedKeys: sortedKeys)
        case let text as String: escape(text, into: &out)
        case is NSNull: out += "null"
        case let number as NSNumber:
            // Numbers from JSON parsing or Foundation: let Foundation write the one fragment.
            guard let data = try? JSONSerialization.data(withJSONObject: [number]),
                let text = String(data: data, encoding: .utf8)
            else { return false }
            out += text.dropFirst().dropLast()
        default:
            return false
        }
        return true
    }

    private static func writeObject(_ object: [String: Any], into out: inout String, sortedKeys: Bool) -> Bool {
        out += "{"
        var first = true
        let entries = sortedKeys ? object.sorted { $0.key < $1.key } : Array(object)
        for (key, value) in entries {
            if !first { out += "," }
            first = false
            escape(key, into: &out)
            out += ":"
            guard write(value, into: &out, sortedKeys: sortedKeys) else { return false }
        }
        out += "}"
        return true
    }

    private static func writeArray(_ array: [Any], into out: inout String, sortedKeys: Bool) -> Bool {
        out += "["
        for (index, element) in array.enumerated() {
            if index > 0 { out += "," }
            guard write(element, into: &out, sortedKeys: sortedKeys) else { return false }
        }
        out += "]"
        return true
    }

    private static func escape(_ text: String, into out: inout String) {
        out += "\""
        defer { out += "\"" }
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            out += text  // the common case: nothing to escape
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}

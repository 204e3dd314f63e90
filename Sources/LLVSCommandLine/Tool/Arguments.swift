/// An option a command accepts: `--name VALUE` (or `--name=VALUE`) when it takes a value, `--name` when not.
struct OptionSpec {
    var name: String
    var valueName: String?
    var help: String
    var repeatable = false

    static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, valueName: nil, help: help) }
    static func value(_ name: String, _ valueName: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, repeatable: repeatable)
    }

    /// The option list of a help text, one option a line.
    static func helpLines(_ options: [OptionSpec]) -> String {
        options.map { option in
            let left = "  --\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
            return left.padding(toLength: max(left.count + 2, 28), withPad: " ", startingAt: 0) + option.help + "\n"
        }.joined()
    }
}

/// The words after the command name, sorted into positionals, option values and flags.
struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `words` against `specs`. `-` alone is a positional (standard input); `--` ends the options.
    init(_ words: [String], specs: [OptionSpec]) throws {
        let byName = Dictionary(uniqueKeysWithValues: specs.map { ($0.name, $0) })
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                positionals.append(word)
                continue
            }
            if word == "--" { optionsEnded = true; continue }
            var name = String(word.drop(while: { $0 == "-" }))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = byName[name] else { throw CommandError.usage("unknown option --\(name)") }
            if let valueName = spec.valueName {
                let value: String
                if let inlineValue { value = inlineValue } else {
                    guard index < words.count else { throw CommandError.usage("--\(name) needs a \(valueName)") }
                    value = words[index]
                    index += 1
                }
                if !spec.repeatable, values[name] != nil { throw CommandError.usage("--\(name) is given more than once") }
                values[name, default: []].append(value)
            } else {
                guard inlineValue == nil else { throw CommandError.usage("--\(name) takes no value") }
                flags.insert(name)
            }
        }
    }
}

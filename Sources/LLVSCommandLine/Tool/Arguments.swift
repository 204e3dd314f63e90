/// An option a command accepts: `--name VALUE` (or `--name=VALUE`) when it takes a value, `--name` when not; `-n` for
/// the few with the short form people type from habit (`-n` for `--dry-run`, `-e` for `--exclude`).
struct OptionSpec {
    var name: String
    var valueName: String?
    var help: String
    var repeatable = false
    var short: Character?

    static func flag(_ name: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }
    static func value(_ name: String, _ valueName: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, repeatable: repeatable)
    }

    /// The option list of a help text, one option a line.
    static func helpLines(_ options: [OptionSpec]) -> String {
        options.map { option in
            let left =
                (option.short.map { "  -\($0), " } ?? "  ") + "--\(option.name)"
                + (option.valueName.map { " \($0)" } ?? "")
            return left.padding(toLength: max(left.count + 2, 28), withPad: " ", startingAt: 0) + option.help + "\n"
        }.joined()
    }
}

/// The words after the command name, sorted into positionals, option values and flags.
struct ParsedArguments {
    var positionals: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    /// The values given for the option `name`, for options declared at run time (a kind of remote's own, from the
    /// registry); commands read their declared options by the declaration (`arguments[option]`).
    func rawValues(_ name: String) -> [String] { values[name] ?? [] }
    /// Whether the flag `name` was given; for flags declared at run time, as `rawValues`.
    func rawFlag(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `words` against `options`, each value checked by its declaration. `-` alone is a positional (standard
    /// input); `--` ends the options.
    init(_ words: [String], options: [any DeclaredOption]) throws {
        let byName = Dictionary(uniqueKeysWithValues: options.map { ($0.spec.name, $0) })
        let byShort = Dictionary(
            uniqueKeysWithValues: options.compactMap { option in option.spec.short.map { ("-\($0)", option.spec.name) }
            })
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
            var name = byShort[word] ?? String(word.drop(while: { $0 == "-" }))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = byName[name] else { throw CommandError.usage("unknown option --\(name)") }
            let spec = option.spec
            if let valueName = spec.valueName {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else { throw CommandError.usage("--\(name) needs a \(valueName)") }
                    value = words[index]
                    index += 1
                }
                if !spec.repeatable, values[name] != nil {
                    throw CommandError.usage("--\(name) is given more than once")
                }
                try option.check(value)
                values[name, default: []].append(value)
            } else {
                guard inlineValue == nil else { throw CommandError.usage("--\(name) takes no value") }
                flags.insert(name)
            }
        }
    }
}

import Foundation
import LLVSSupport
import LLVSRetention

/// An option a command declares once, as a typed value: its name, the name of its value in help, its help text and
/// the kind of value it takes. Parsing, the check of each value (at parse time, with an error naming the option),
/// `--help` and reading the value back all come from the declaration; a command reads it with `arguments[option]`,
/// so a misspelled option does not compile.
protocol DeclaredOption: Sendable {
    var spec: OptionSpec { get }
    /// Checks a value given on the command line; the error names the option and what it takes.
    func check(_ text: String) throws
    /// The values it takes when they are a fixed few (for completions and man pages).
    var choices: [String]? { get }
}

extension DeclaredOption {
    func check(_ text: String) throws {}
    var choices: [String]? { nil }
}

/// What an option's value must be, and the value it stands for.
struct ValueKind<Value>: Sendable {
    /// What the value must be, for errors: "a number from 1 to 64".
    let expected: String
    /// The values it takes when they are a fixed few.
    var choices: [String]? = nil
    let convert: @Sendable (String) -> Value?
}

extension ValueKind where Value == String {
    static var text: ValueKind { ValueKind(expected: "a value") { $0 } }
    static var nonEmpty: ValueKind { ValueKind(expected: "a value") { $0.isEmpty ? nil : $0 } }
    static func oneOf(_ choices: [String]) -> ValueKind {
        ValueKind(expected: "one of " + choices.joined(separator: ", "), choices: choices) {
            choices.contains($0) ? $0 : nil
        }
    }
}

extension ValueKind where Value == Int {
    static func integer(_ range: ClosedRange<Int>) -> ValueKind {
        let expected =
            range.upperBound == .max
            ? "a whole number from \(range.lowerBound) up"
            : "a whole number from \(range.lowerBound) to \(range.upperBound)"
        return ValueKind(expected: expected) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }
}

extension ValueKind where Value == Double {
    /// A number above `lower` (not equal) and at most `upper`.
    static func number(above lower: Double, atMost upper: Double, unit: String) -> ValueKind {
        ValueKind(expected: "a number of \(unit) above \(Self.shown(lower)) and at most \(Self.shown(upper))") { text in
            guard let value = Double(text), value.isFinite, value > lower, value <= upper else { return nil }
            return value
        }
    }

    private static func shown(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

extension ValueKind where Value == Date {
    /// A moment as people write one: ISO 8601 with a time zone (2026-11-29T12:00:00Z), a day (2026-11-29, its start
    /// in local time), a local time without a zone (2026-11-29T12:00), or a span back from now (3d, 12h, 1y6m).
    static var moment: ValueKind {
        ValueKind(
            expected: "a date (2026-11-29), a date and time (2026-11-29T12:00:00Z) or a span back from now (3d, 12h)"
        ) {
            MomentText.parse($0, now: Date())
        }
    }
}

/// The moments `--before` and its kin take.
enum MomentText {
    static func parse(_ text: String, now: Date, timeZone: TimeZone = .current) -> Date? {
        if let date = RFC3339Date.parse(text) { return date }
        if let span = KeepDuration(text) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            return span.subtracted(from: now, calendar: calendar)
        }
        for format in [
            "yyyy-MM-dd", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd HH:mm:ss",
        ] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = timeZone
            formatter.dateFormat = format
            formatter.isLenient = false
            if let date = formatter.date(from: text), formatter.string(from: date) == text { return date }
        }
        return nil
    }
}

/// An option that takes a value (`--limit 10`, `--limit=10`); repeatable ones gather every value given.
struct Option<Value>: DeclaredOption {
    let spec: OptionSpec
    let kind: ValueKind<Value>

    init(
        _ name: String, _ valueName: String, _ help: String, _ kind: ValueKind<Value>, repeatable: Bool = false,
        short: Character? = nil
    ) {
        var spec = OptionSpec.value(name, valueName, help, repeatable: repeatable)
        spec.short = short
        self.spec = spec
        self.kind = kind
    }

    func value(of text: String) throws -> Value {
        guard let value = kind.convert(text) else {
            if text.isEmpty { throw CommandError.usage("--\(spec.name) is empty; it needs \(kind.expected)") }
            throw CommandError.usage("--\(spec.name) needs \(kind.expected), not \(text)")
        }
        return value
    }

    func check(_ text: String) throws { _ = try value(of: text) }

    var choices: [String]? { kind.choices }
}

/// An option that takes no value (`--json`).
struct Flag: DeclaredOption {
    let spec: OptionSpec

    init(_ name: String, _ help: String, short: Character? = nil) {
        var spec = OptionSpec.flag(name, help)
        spec.short = short
        self.spec = spec
    }
}

extension ParsedArguments {
    /// The value of `option`, nil when it was not given; the last one for a repeatable option.
    subscript<Value>(_ option: Option<Value>) -> Value? {
        // Checked when the arguments were parsed: a value given is valid here.
        rawValues(option.spec.name).last.flatMap { try? option.value(of: $0) }
    }

    /// Every value of a repeatable `option`, in the order given.
    func all<Value>(_ option: Option<Value>) -> [Value] {
        rawValues(option.spec.name).compactMap { try? option.value(of: $0) }
    }

    subscript(_ flag: Flag) -> Bool { rawFlag(flag.spec.name) }
}

/// Options every command shares.
enum CommonOptions {
    static let json = Flag("json", "print JSON")
    /// `--json` of the commands that run a while (`JSONEvents`).
    static let jsonEvents = Flag("json", "print progress and a summary as JSON, one object per line")
    /// What scheduled runs use (`CommandContext.quiet`).
    static let quiet = Flag(
        "quiet", "print only a line when the run starts and one when it ends (with its figures), to standard error",
        short: "q")
    /// `-n`, as restic, rsync and make take it.
    static func dryRun(_ help: String) -> Flag { Flag("dry-run", help, short: "n") }
}

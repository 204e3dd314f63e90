import Foundation

// loco: a contact book on LLVS, after LLVS's LoCo sample.
//
//   loco demo [--json]
//
// Runs the two-device story in a temporary folder; with --json it prints one line,
// {"deviceA": CONTACT, "deviceB": CONTACT, "query": ROWS}.

let usage = "usage: loco demo [--json]"
let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "demo", arguments.count <= 2, arguments.count == 1 || arguments[1] == "--json" else {
    FileHandle.standardError.write(Data("\(usage)\n".utf8))
    exit(arguments == ["--help"] || arguments == ["-h"] ? 0 : 2)
}
let json = arguments.count == 2
do {
    let outcome = try await Demo(say: { if !json { print($0) } }).run()
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(outcome), as: UTF8.self))
    }
} catch {
    FileHandle.standardError.write(Data("loco: \(error)\n".utf8))
    exit(1)
}

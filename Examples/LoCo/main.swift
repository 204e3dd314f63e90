import Foundation

// loco: a contact book on LLVS, after LLVS's LoCo sample.
//
//   loco demo [--json] [--keep]
//
// Runs the two-device story in a temporary folder; with --json it prints one line,
// {"deviceA": CONTACT, "deviceB": CONTACT, "query": ROWS, "sameField": {"deviceA": CONTACT, "deviceB": CONTACT}}.

let overview = """
    usage: loco demo [--json] [--keep]

    loco is a contact book built on LLVS, after LLVS's LoCo sample app: contacts are typed models (one JSON value
    each) in a versioned store, merged property by property when two devices edited the same contact, and projected
    into a SQLite table the app queries.

    commands:
      demo    two devices sharing a remote folder edit one contact while apart, then sync (`loco demo --help`)

    """

let demoHelp = """
    usage: loco demo [--json] [--keep]

    Two devices, A and B, each with its own store, sync through a shared remote folder:
      1. A adds a contact (A. Lovelace, of London); both sync, so B has her too.
      2. Apart, A changes her first name to Ada while B moves her to Paris; after syncing, both devices have
         Ada Lovelace, of Paris: the merge took each side's edit of a different field.
      3. Apart again, both change the same field, the city: A to Rome, then B to Berlin. After syncing, both have the
         edit saved last (Berlin): for a field both sides changed, the more recent change wins.
    B's SQLite projection is asked for the contacts in Paris after step 2.

    options:
      --json    print the outcome as one JSON line instead of the story
      --keep    leave the devices' stores and the remote in place (their folder is printed) to look at them with
                `llvs --store FOLDER/device-a/store log`, say
      -h, --help

    """

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments == ["--help"] || arguments == ["-h"] || arguments == ["help"] {
    print(overview, terminator: "")
    exit(arguments.isEmpty ? 2 : 0)
}
guard arguments.first == "demo" else {
    FileHandle.standardError.write(Data("loco: unknown command \(arguments[0])\n\(overview)".utf8))
    exit(2)
}
let options = Set(arguments.dropFirst())
if options.contains("--help") || options.contains("-h") {
    print(demoHelp, terminator: "")
    exit(0)
}
guard options.isSubset(of: ["--json", "--keep"]), options.count == arguments.count - 1 else {
    FileHandle.standardError.write(Data("usage: loco demo [--json] [--keep]  (see `loco demo --help`)\n".utf8))
    exit(2)
}
let json = options.contains("--json")
do {
    let outcome = try await Demo(say: { if !json { print($0) } }, keep: options.contains("--keep")).run()
    if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(outcome), as: UTF8.self))
    }
} catch {
    FileHandle.standardError.write(Data("loco: \(error)\n".utf8))
    exit(1)
}

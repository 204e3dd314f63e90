import Foundation
import LLVS
import LLVSGoogleDrive

struct RemoteCommand: Command {
    static let name = "remote"
    static let summary = "Add, list, show, rename or remove remotes: llvs remote add NAME URL | list | show NAME | rename OLD NEW | remove NAME."
    static let arguments = "add NAME URL | list | show NAME | rename OLD NEW | remove NAME"
    static let options: [OptionSpec] = [
        .value("base-path", "PATH", "the folder on the remote that holds the store (add)"),
        .value("user", "USER", "the WebDAV user name (add); the password comes from $LLVS_WEBDAV_PASSWORD or --password-stdin"),
        .flag("password-stdin", "read the WebDAV password from standard input and keep it in a private file (add)"),
        .value("concurrency", "N", "transfers at once (add; default 8)"),
        .value("client-id", "ID", "the OAuth client ID you registered with the service (add, gdrive: onedrive: pcloud: box:); or $LLVS_<KIND>_CLIENT_ID, as $LLVS_PCLOUD_CLIENT_ID"),
        .flag("client-secret-stdin", "read the OAuth client secret from standard input into a private file (add, gdrive: pcloud: box:; OneDrive needs none); or $LLVS_<KIND>_CLIENT_SECRET"),
        .value("endpoint", "URL", "send every request of the service to this base URL instead, e.g. a mock from `llvs-mock gdrive` (add)"),
        .value("removal", "trash|delete", "what removing a remote file does on Google Drive (add; default trash)"),
        .value("root-folder-id", "ID", "the Drive folder that is the remote's root (add; default My Drive)"),
        .value("scope", "drive.file|drive", "what a Google Drive remote may touch: drive.file (default: only what llvs created) or drive (the whole Drive, for a folder made elsewhere; not with auth --device) (add)"),
        .value("drive-id", "ID", "a OneDrive drive by ID, as a SharePoint library (add, onedrive:; default your own drive)"),
        .value("tenant", "TENANT", "the Microsoft tenant to sign in with: common (default), consumers, organizations or an ID (add, onedrive:)"),
        .flag("json", "print JSON (list, show)"),
    ]
    static let positionalCount = 1...3

    let words: [String]
    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws {
        words = arguments.positionals
        self.arguments = arguments
        switch words[0] {
        case "add": guard words.count == 3 else { throw CommandError.usage("remote add needs NAME and URL") }
        case "remove": guard words.count == 2 else { throw CommandError.usage("remote remove needs NAME") }
        case "list": guard words.count == 1 else { throw CommandError.usage("remote list takes no arguments") }
        case "show": guard words.count == 2 else { throw CommandError.usage("remote show needs NAME") }
        case "rename": guard words.count == 3 else { throw CommandError.usage("remote rename needs OLD and NEW") }
        default: throw CommandError.usage("unknown remote action \(words[0]); use add, list, show, rename or remove")
        }
    }

    func run(in context: CommandContext) async throws {
        let registry = context.registry
        var remotes = try registry.load()
        switch words[0] {
        case "add":
            let name = words[1]
            try Self.checkName(name)
            guard remotes[name] == nil else { throw CommandError.failed("A remote called \(name) exists already; remove it first.") }
            let (kind, _) = try RemoteConnection.validate(words[2])
            var concurrency: Int?
            if let text = arguments.value("concurrency") {
                guard let n = Int(text), (1...64).contains(n) else { throw CommandError.usage("--concurrency needs a number from 1 to 64") }
                concurrency = n
            }
            var remote = RemoteConfiguration(url: words[2], basePath: arguments.value("base-path"), user: arguments.value("user"), concurrency: concurrency)
            if let endpoint = arguments.value("endpoint") {
                guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                    throw CommandError.usage("--endpoint needs an http:// or https:// URL, not \(endpoint)")
                }
                remote.endpoint = endpoint
            }
            if let removal = arguments.value("removal") {
                guard ["trash", "delete"].contains(removal) else { throw CommandError.usage("--removal is trash or delete, not \(removal)") }
                remote.removal = removal
            }
            remote.rootFolderId = arguments.value("root-folder-id")
            if let scope = arguments.value("scope") {
                guard GoogleDriveConfiguration.Scope(rawValue: scope) != nil else {
                    throw CommandError.usage("--scope is drive.file or drive, not \(scope)")
                }
                remote.scope = scope
            }
            remote.clientId = arguments.value("client-id")
            remote.driveId = arguments.value("drive-id")
            remote.tenant = arguments.value("tenant")
            for (option, owner) in [("removal", RemoteKind.gdrive), ("root-folder-id", .gdrive), ("scope", .gdrive), ("drive-id", .onedrive), ("tenant", .onedrive)]
            where arguments.value(option) != nil && kind != owner {
                throw CommandError.usage("--\(option) is for \(owner.rawValue): remotes, not \(kind.rawValue):")
            }
            if kind.usesOAuth, remote.clientId == nil, (ProcessInfo.processInfo.environment[kind.environmentPrefix + "CLIENT_ID"] ?? "").isEmpty {
                throw CommandError.usage("a \(kind.serviceName) remote needs the OAuth client you registered: --client-id ID (or $\(kind.environmentPrefix)CLIENT_ID)")
            }
            if kind.requiresClientSecret, !arguments.has("client-secret-stdin"), (ProcessInfo.processInfo.environment[kind.environmentPrefix + "CLIENT_SECRET"] ?? "").isEmpty {
                throw CommandError.usage("a \(kind.serviceName) remote needs the OAuth client's secret: --client-secret-stdin (or $\(kind.environmentPrefix)CLIENT_SECRET)")
            }
            remotes[name] = remote
            if arguments.has("password-stdin") || arguments.has("client-secret-stdin") {
                let secret = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .newlines)
                try registry.writePrivately(Data(secret.utf8), to: registry.secretFile(name))
            }
            try registry.save(remotes)
            context.writeLine("Added remote \(name) (\(words[2])).")
            if kind.usesOAuth {
                context.writeLine("Next, authorize it: llvs auth \(name)   (\(kind.hasDeviceFlow ? "--headless or --device" : "--headless") on a machine without a browser)")
            }
        case "show":
            guard let remote = remotes[words[1]] else { throw CommandError.notFound("There is no remote called \(words[1]).") }
            let (kind, _) = try RemoteConnection.validate(remote.url)
            let shown = Shown(name: words[1], configuration: remote, kind: kind.serviceName,
                              secretKept: FileManager.default.fileExists(atPath: registry.secretFile(words[1]).path),
                              authorized: kind.usesOAuth ? FileManager.default.fileExists(atPath: registry.tokenFile(words[1]).path) : nil)
            if arguments.has("json") { try context.writeJSON(shown); return }
            context.writeLine("\(shown.name): \(remote.url) (\(shown.kind))")
            for (label, value) in [("base path", remote.basePath), ("user", remote.user), ("endpoint", remote.endpoint), ("client ID", remote.clientId),
                                   ("scope", remote.scope), ("removal", remote.removal), ("root folder ID", remote.rootFolderId), ("drive ID", remote.driveId),
                                   ("tenant", remote.tenant), ("concurrency", remote.concurrency.map(String.init))] {
                if let value { context.writeLine("  \(label): \(value)") }
            }
            if shown.secretKept { context.writeLine("  \(kind.usesOAuth ? "client secret" : "password"): kept in \(registry.secretFile(words[1]).path)") }
            if let authorized = shown.authorized {
                context.writeLine(authorized ? "  authorized: token in \(registry.tokenFile(words[1]).path)" : "  not authorized yet: run `llvs auth \(words[1])`")
            }
        case "rename":
            let (old, new) = (words[1], words[2])
            try Self.checkName(new)
            guard let remote = remotes[old] else { throw CommandError.notFound("There is no remote called \(old).") }
            guard remotes[new] == nil else { throw CommandError.failed("A remote called \(new) exists already; remove it first.") }
            // The secret and token files go first, so a failure part-way leaves the old name whole.
            for file in [registry.secretFile, registry.tokenFile] where FileManager.default.fileExists(atPath: file(old).path) {
                try FileManager.default.moveItem(at: file(old), to: file(new))
            }
            remotes[old] = nil
            remotes[new] = remote
            try registry.save(remotes)
            if RememberedRemote(store: context.storeURL).name == old { RememberedRemote(store: context.storeURL).remember(new) }
            context.writeLine("Renamed remote \(old) to \(new).")
        case "remove":
            guard remotes.removeValue(forKey: words[1]) != nil else { throw CommandError.notFound("There is no remote called \(words[1]).") }
            try registry.save(remotes)
            try? FileManager.default.removeItem(at: registry.secretFile(words[1]))
            try? FileManager.default.removeItem(at: registry.tokenFile(words[1]))
            context.writeLine("Removed remote \(words[1]).")
        default:
            if arguments.has("json") {
                try context.writeJSON(remotes)
            } else {
                for (name, remote) in remotes.sorted(by: { $0.key < $1.key }) {
                    context.writeLine("\(name)\t\(remote.url)\(remote.basePath.map { "  (base path \($0))" } ?? "")")
                }
            }
        }
    }

    /// What `remote show` prints: the configuration (never a secret), and whether a secret and a token are kept.
    struct Shown: Encodable {
        var name: String
        var configuration: RemoteConfiguration
        var kind: String
        var secretKept: Bool
        var authorized: Bool?
    }

    static func checkName(_ name: String) throws {
        guard name.range(of: "^[A-Za-z0-9][A-Za-z0-9._-]*$", options: .regularExpression) != nil else {
            throw CommandError.usage("a remote name is letters, digits, '.', '_' and '-', not \(name)")
        }
    }
}

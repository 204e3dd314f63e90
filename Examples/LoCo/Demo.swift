import Foundation
import LLVS

/// Two devices edit one contact at once, each a different field, and both edits survive the sync; then both edit the
/// same field, and the later edit wins on both: the story of LLVS's LoCo sample, told in a temporary folder that is
/// removed afterwards (unless `keep`).
struct Demo {
    struct Outcome: Encodable {
        var deviceA: Contact
        var deviceB: Contact
        var query: [[String: String]]
        var sameField: SameField
        /// With `--keep`: where the stores and the remote are.
        var folder: String?
    }

    struct SameField: Encodable {
        var deviceA: Contact
        var deviceB: Contact
    }

    let say: (String) -> Void
    var keep = false

    func run() async throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loco-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
        let remoteFolder = folder.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remoteFolder, withIntermediateDirectories: true)
        let remote = LocalFolderFileSystem(root: remoteFolder)
        let a = try await Device(name: "A", folder: folder.appendingPathComponent("device-a"), remote: remote)
        let b = try await Device(name: "B", folder: folder.appendingPathComponent("device-b"), remote: remote)
        say("Two devices share a remote at \(remoteFolder.path).")

        let id = UUID()
        try await a.save(Contact(id: id, firstName: "A.", lastName: "Lovelace", city: "London"))
        say("Device A adds A. Lovelace, of London.")
        _ = try await a.sync()
        _ = try await b.sync()
        say("Both sync: device B now has \(try await describe(b.contact(id))).")

        guard var onA = try await a.contact(id), var onB = try await b.contact(id) else {
            throw DemoError.contactMissing(id)
        }
        onA.firstName = "Ada"
        onB.city = "Paris"
        try await a.save(onA)
        try await b.save(onB)
        say("Offline, device A sets the first name to Ada while device B moves her to Paris.")

        for device in [a, b, a] {
            let report = try await device.sync()
            say(
                "Device \(device.name) syncs (\(versions(report.retrieve.retrieved.count)) in, \(versions(report.send.sent.count)) out)."
            )
        }
        let finalA = try await a.contact(id), finalB = try await b.contact(id)
        guard let finalA, let finalB else { throw DemoError.contactMissing(id) }
        say("Device A has \(describe(finalA)); device B has \(describe(finalB)): both edits survived the merge.")
        let rows = try await b.contacts(in: "Paris")
        say(
            "Device B's projection, asked for contacts in Paris, answers: "
                + rows.map { "\($0["first_name"] ?? "") \($0["last_name"] ?? "")" }.joined(separator: ", ") + ".")

        var rome = finalA, berlin = finalB
        rome.city = "Rome"
        berlin.city = "Berlin"
        try await a.save(rome)
        try await b.save(berlin)
        say("Apart again, both change the same field: device A moves her to Rome, then device B to Berlin.")
        for device in [a, b, a] { _ = try await device.sync() }
        guard let lastA = try await a.contact(id), let lastB = try await b.contact(id) else {
            throw DemoError.contactMissing(id)
        }
        say(
            "After syncing, device A has \(describe(lastA)) and device B \(describe(lastB)): for a field both changed, the edit saved last wins."
        )
        if keep {
            say(
                "The stores are kept in \(folder.path): device-a/store, device-b/store and the remote (`llvs --store \(folder.path)/device-a/store log`)."
            )
        }
        return Outcome(
            deviceA: finalA, deviceB: finalB, query: rows, sameField: SameField(deviceA: lastA, deviceB: lastB),
            folder: keep ? folder.path : nil)
    }

    private func versions(_ count: Int) -> String { count == 1 ? "1 version" : "\(count) versions" }

    private func describe(_ contact: Contact?) -> String {
        contact.map { "\($0.firstName) \($0.lastName), of \($0.city)" } ?? "no such contact"
    }
}

enum DemoError: Error, CustomStringConvertible {
    case contactMissing(UUID)

    var description: String { "The contact \(self) is missing after a sync" }
}

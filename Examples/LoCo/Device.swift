import Foundation
import LLVS
import LLVSModel
import LLVSProjection

/// One device of the contact book: its store (with the coordinator that tracks its current version), the shared
/// remote it syncs with, and a SQLite projection of its contacts that it queries.
struct Device {
    let name: String
    let coordinator: StoreCoordinator
    let exchange: CloudFileSystemExchange
    let projection: ProjectionFollower

    static let contactsTable = ProjectedType.model(
        Contact.self, tableName: "contacts",
        columns: [
            ProjectedColumn(name: "first_name", declaration: "TEXT"),
            ProjectedColumn(name: "last_name", declaration: "TEXT"),
            ProjectedColumn(name: "city", declaration: "TEXT"),
        ]
    ) { contact in
        ["first_name": .text(contact.firstName), "last_name": .text(contact.lastName), "city": .text(contact.city)]
    }

    init(name: String, folder: URL, remote: any CloudFileSystem) async throws {
        self.name = name
        let store = try Store(rootDirectoryURL: folder.appendingPathComponent("store"))
        coordinator = try StoreCoordinator(store: store)
        let arbiter = MergeableArbiter()
        arbiter.register(Contact.self)
        await coordinator.setMergeArbiter(arbiter)
        exchange = CloudFileSystemExchange(store: store, fileSystem: remote)
        projection = try ProjectionFollower(
            databaseURL: folder.appendingPathComponent("contacts.sqlite"),
            coordinator: coordinator, types: [Self.contactsTable])
    }

    func save(_ contact: Contact) async throws {
        try await coordinator.save(contact, instanceIdentifier: contact.id.uuidString)
    }

    func contact(_ id: UUID) async throws -> Contact? {
        try await coordinator.fetchModel(Contact.self, instanceIdentifier: id.uuidString)
    }

    /// Sends and receives versions, merging what arrived, then brings the projection up to date.
    func sync() async throws -> ExchangeReport {
        let report = try await coordinator.exchange(with: exchange)
        try await projection.projectCurrentVersion()
        return report
    }

    /// The projected contacts living in `city`, as column → value rows.
    func contacts(in city: String) async throws -> [[String: String]] {
        try await projection.query { database in
            var rows: [[String: String]] = []
            try database.forEach(
                matchingQuery: "SELECT first_name, last_name, city FROM contacts WHERE city = ? ORDER BY last_name",
                withBindings: [.text(city)]
            ) { row in
                var columns: [String: String] = [:]
                for index in 0..<row.columnCount {
                    if case .text(let text) = row.value(inColumnAtIndex: index) {
                        columns[row.columnName(at: index)] = text
                    }
                }
                rows.append(columns)
            }
            return rows
        }
    }
}

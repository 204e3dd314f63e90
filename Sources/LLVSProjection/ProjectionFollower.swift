import Foundation
import LLVS
import LLVSSQLite

/// Keeps SQLite tables that project a coordinator's current version, as upstream LLVS's `ProjectionFollower`.
///
/// The store is the truth and the database an index over it: the follower owns its connection (opened from a URL,
/// never handed in, because a connection is not thread-safe) and runs every pass and query inside the actor.
/// Raising `schemaVersion` drops the tables and projects everything again; so does losing the database.
public actor ProjectionFollower {
    public nonisolated let databaseURL: URL
    public nonisolated let coordinator: StoreCoordinator
    private let database: SQLiteDatabase
    private let projector: Projector

    public init(databaseURL: URL, coordinator: StoreCoordinator, types: [ProjectedType], schemaVersion: Int = 1) throws
    {
        self.databaseURL = databaseURL
        self.coordinator = coordinator
        let projector = try Projector(types: types, schemaVersion: schemaVersion)
        let database = try SQLiteDatabase(fileURL: databaseURL)
        try projector.prepare(database)
        self.projector = projector
        self.database = database
    }

    /// Brings the tables to the coordinator's current version.
    @discardableResult
    public func projectCurrentVersion() async throws -> ProjectionResult {
        let target = await coordinator.currentVersionId
        return try projector.project(target, of: coordinator.store, into: database)
    }

    /// Runs queries on the projection's database, inside the actor.
    public func query<T: Sendable>(_ body: @Sendable (SQLiteDatabase) throws -> T) throws -> T {
        try body(database)
    }

    /// Projects after every change of the coordinator's current version (and once at the start), calling
    /// `onResult` with each pass's outcome, until the returned task is cancelled.
    @discardableResult
    public nonisolated func followUpdates(
        onResult: @escaping @Sendable (Result<ProjectionResult, any Error>) -> Void
    ) -> Task<Void, Never> {
        Task {
            for await _ in await coordinator.versionUpdates() {
                if Task.isCancelled { return }
                do {
                    onResult(.success(try await projectCurrentVersion()))
                } catch {
                    onResult(.failure(error))
                }
            }
        }
    }
}

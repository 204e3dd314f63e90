import Foundation
import Testing

/// A merge never hides a backup: two stores that each back up a source of their own and sync through one remote
/// both list both sources, and each restores by the other's name or folder.
extension BackupCommandTests {
    @Test func sourcesBackedUpInTwoStoresStayListedAfterTheyMergeThroughARemote() async throws {
        try write(path("pics/cat.jpg"), Data("meow".utf8))
        try write(path("music/song.ogg"), Data("la la".utf8))
        for store in ["a", "b"] { #expect(try await llvs("init", "--store", path(store)).status == 0) }
        let added = try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote"))
        #expect(added.status == 0, "\(added.error)")

        #expect(
            try await llvs("backup", path("pics"), "--name", "pictures", "--store", path("a"), "--to", "home").status
                == 0)
        let music = try await llvs("backup", path("music"), "--name", "music", "--store", path("b"), "--to", "home")
        #expect(music.status == 0, "\(music.error)")
        for store in ["a", "b"] { #expect(try await llvs("sync", "home", "--store", path(store)).status == 0) }

        for store in ["a", "b"] {
            let listing = try await llvs("backups", "--store", path(store))
            #expect(
                listing.text.contains("pictures") && listing.text.contains("music"), "store \(store): \(listing.text)")
            let byFolder = try await llvs(
                "restore", path("out-\(store)"), "--source", path("pics"), "--store", path(store))
            #expect(byFolder.status == 0, "store \(store): \(byFolder.error)")
            #expect(try snapshot(of: path("out-\(store)")) == snapshot(of: path("pics")))
            let byName = try await llvs(
                "restore", path("out-music-\(store)"), "--source", "music", "--store", path(store))
            #expect(byName.status == 0, "store \(store): \(byName.error)")
        }
    }
}

import Foundation
import LLVSModel

/// A contact, stored as upstream's LoCo sample stores it: one JSON value per contact, merged property by property.
struct Contact: StorableModel, Mergeable, Equatable {
    static let modelTypeIdentifier = "Contact"

    var id: UUID
    var firstName: String
    var lastName: String
    var city: String
    var avatarJPEGData: Data?
}

import Foundation

/// The `fields` parameter: which parts of an answer to send (`nextPageToken,files(id,name,size)`). Drive sends only
/// what is asked for (a listing without `nextPageToken` in its fields has no page token) and refuses a field it
/// does not know.
struct DriveFieldMask: Sendable {
    /// Field name to its own mask; nil means the whole value.
    var fields: [String: DriveFieldMask?]
    var everything: Bool { fields["*"] != nil }

    struct Invalid: Error { var field: String }

    static func parse(_ text: String) throws -> DriveFieldMask {
        var chars = Array(text)[...]
        let mask = try parseList(&chars)
        guard chars.isEmpty else { throw Invalid(field: String(chars)) }
        return mask
    }

    private static func parseList(_ chars: inout ArraySlice<Character>) throws -> DriveFieldMask {
        var fields: [String: DriveFieldMask?] = [:]
        while let c = chars.first, c != ")" {
            if c == "," || c.isWhitespace { chars = chars.dropFirst(); continue }
            let name = String(chars.prefix { $0 != "," && $0 != "(" && $0 != ")" && !$0.isWhitespace })
            guard !name.isEmpty else { throw Invalid(field: String(chars.prefix(20))) }
            chars = chars.dropFirst(name.count)
            if chars.first == "(" {
                chars = chars.dropFirst()
                let inner = try parseList(&chars)
                guard chars.first == ")" else { throw Invalid(field: name) }
                chars = chars.dropFirst()
                fields[name] = inner
            } else {
                // `files/id` is the same as `files(id)`.
                let path = name.split(separator: "/").map(String.init)
                if path.count > 1 {
                    var nested: DriveFieldMask? = nil
                    for part in path.dropFirst().reversed() { nested = DriveFieldMask(fields: [part: nested]) }
                    fields[path[0]] = nested
                } else {
                    fields[name] = .some(nil)
                }
            }
        }
        return DriveFieldMask(fields: fields)
    }

    /// Keeps the masked fields of `object`; a field the schema does not have is an error, as Drive answers
    /// "Invalid field selection".
    func apply(to object: [String: Any], schema: DriveSchema) throws -> [String: Any] {
        try validate(against: schema)
        if everything { return object }
        var result: [String: Any] = [:]
        for (name, mask) in fields {
            guard let inner = schema.fields[name] else { throw Invalid(field: name) }
            guard let value = object[name] else { continue }
            if let mask, let inner {
                if let list = value as? [[String: Any]] {
                    result[name] = try list.map { try mask.apply(to: $0, schema: inner) }
                } else if let single = value as? [String: Any] {
                    result[name] = try mask.apply(to: single, schema: inner)
                } else {
                    result[name] = value
                }
            } else {
                result[name] = value
            }
        }
        return result
    }
}

extension DriveFieldMask {
    /// Every field named must be one the resource has, whether or not the answer holds it (an empty listing
    /// refuses `files(bogus)` as a full one does). Parts of a field this schema keeps whole are not checked.
    func validate(against schema: DriveSchema) throws {
        for (name, mask) in fields where name != "*" {
            guard let inner = schema.fields[name] else { throw Invalid(field: name) }
            if let mask, let inner { try mask.validate(against: inner) }
        }
    }
}

/// The fields a resource has, for checking masks; nil for a field with no parts.
struct DriveSchema: Sendable {
    var fields: [String: DriveSchema?]

    /// Drive v3's File resource, every field (the objects among them kept whole: their parts are not checked).
    static let file = DriveSchema(
        fields: Dictionary(
            uniqueKeysWithValues: [
                "kind", "driveId", "fileExtension", "copyRequiresWriterPermission", "md5Checksum", "contentHints",
                "writersCanShare",
                "viewedByMe", "mimeType", "exportLinks", "parents", "thumbnailLink", "iconLink", "shared",
                "lastModifyingUser", "owners",
                "headRevisionId", "sharingUser", "webViewLink", "webContentLink", "size", "viewersCanCopyContent",
                "permissions",
                "hasThumbnail", "spaces", "folderColorRgb", "id", "name", "description", "starred", "trashed",
                "explicitlyTrashed",
                "createdTime", "modifiedTime", "modifiedByMeTime", "viewedByMeTime", "sharedWithMeTime",
                "quotaBytesUsed", "version",
                "originalFilename", "ownedByMe", "fullFileExtension", "properties", "appProperties", "isAppAuthorized",
                "teamDriveId",
                "capabilities", "hasAugmentedPermissions", "trashingUser", "thumbnailVersion", "trashedTime",
                "modifiedByMe",
                "permissionIds", "imageMediaMetadata", "videoMediaMetadata", "shortcutDetails", "contentRestrictions",
                "resourceKey",
                "linkShareMetadata", "labelInfo", "sha1Checksum", "sha256Checksum", "inheritedPermissionsDisabled",
                "downloadRestrictions",
            ].map { ($0, DriveSchema?.none) }))
    static let fileList = DriveSchema(fields: [
        "kind": nil, "incompleteSearch": nil, "nextPageToken": nil, "files": file,
    ])
    static let drive = DriveSchema(
        fields: Dictionary(
            uniqueKeysWithValues: [
                "id", "name", "colorRgb", "kind", "backgroundImageLink", "capabilities", "themeId",
                "backgroundImageFile", "createdTime",
                "hidden", "restrictions", "orgUnitId",
            ].map { ($0, DriveSchema?.none) }))
    static let change = DriveSchema(fields: [
        "kind": nil, "changeType": nil, "time": nil, "removed": nil, "fileId": nil, "file": file,
        "driveId": nil, "drive": drive, "teamDriveId": nil, "teamDrive": nil,
    ])
    static let changeList = DriveSchema(fields: [
        "kind": nil, "nextPageToken": nil, "newStartPageToken": nil, "changes": change,
    ])
    static let about = DriveSchema(
        fields: Dictionary(
            uniqueKeysWithValues: [
                "kind", "user", "storageQuota", "driveThemes", "canCreateDrives", "importFormats", "exportFormats",
                "appInstalled",
                "maxImportSizes", "maxUploadSize", "folderColorPalette", "teamDriveThemes", "canCreateTeamDrives",
            ].map { ($0, DriveSchema?.none) }))

    /// A field sent whole (no mask of its own).
    static let whole: DriveFieldMask? = nil

    /// What Drive sends when `fields` is not given.
    static let defaultFile = DriveFieldMask(fields: ["kind": whole, "id": whole, "name": whole, "mimeType": whole])
    static let defaultFileList = DriveFieldMask(fields: [
        "kind": whole, "incompleteSearch": whole, "nextPageToken": whole,
        "files": defaultFile,
    ])
    static let defaultChangeList = DriveFieldMask(fields: [
        "kind": whole, "nextPageToken": whole, "newStartPageToken": whole,
        "changes": DriveFieldMask(fields: [
            "kind": whole, "changeType": whole, "time": whole, "removed": whole,
            "fileId": whole, "file": defaultFile,
        ]),
    ])
}

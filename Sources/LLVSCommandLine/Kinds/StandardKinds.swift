extension ConnectorRegistry {
    /// Every kind this package ships.
    public static let standard = ConnectorRegistry([.localFolder, .webDAV, .googleDrive, .oneDrive, .pCloud, .box])
}

import CofferFormat

extension RandomIdentifier {
    /// A fresh random identifier (a record's, a vault's): the format spells identifiers, the
    /// store draws them.
    public static func random() throws(CryptoError) -> Self {
        Self(validatedBytes: try SecureRandom.bytes(identifierByteCount)[...])
    }
}

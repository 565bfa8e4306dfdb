import CofferSupport
/// Why bytes are not a valid Coffer v1 file. Raised by pure decoding code, before any key is used.
public enum FormatError: Error, Equatable, Sendable {
    /// The file does not start with `COFFER` and the expected type byte.
    case badMagic
    /// A format version this reader does not know.
    case unsupportedVersion(UInt8)
    /// Too short or too long for its type, or not a whole number of blocks.
    case badLength
    /// A reserved field is not zero, or a field is not in its one canonical form.
    case nonCanonical(String)
    /// The header asks for KDF costs outside the accepted range; refused before deriving.
    case kdfParametersOutOfRange
    /// A vault, record or group identifier that is not in its canonical spelling.
    case invalidIdentifier
    /// A decrypted JSON document that does not match SPEC.md (the reason names the field).
    case invalidDocument(String)
}

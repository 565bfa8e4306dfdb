import CofferDBus
import CofferProvider
import CofferHostKit

/// A client's session (`OpenSession`): how secrets travel between it and the service. It belongs
/// to the connection that opened it: another connection naming it is refused (`NoSession`), and
/// it ends with `Close()` or when its connection leaves the bus.
struct SecretSession {
    let owner: String
    /// Its object path, which every Secret struct it carries names.
    let path: String
    /// `nil`: the `plain` algorithm (the secret as it is; the bus is local).
    let cipher: SecretSessionCipher?

    static let plain = "plain"
    static let diffieHellman = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// A Secret struct `(oayays)`: session, parameters (the IV), value, content type.
    func encode(_ secret: [UInt8], contentType: String) throws -> DBusValue {
        if let cipher {
            let (iv, ciphertext) = try cipher.encrypt(secret)
            return .structure([.objectPath(path), .bytes(iv), .bytes(ciphertext), .string(contentType)])
        }
        return .structure([.objectPath(path), .bytes([]), .bytes(secret), .string(contentType)])
    }

    /// The secret and content type a Secret struct carries.
    func decode(_ fields: [DBusValue]) throws(SecretServiceFault) -> (secret: [UInt8], contentType: String) {
        guard fields.count == 4, let parameters = fields[1].bytesValue, let value = fields[2].bytesValue,
              case .string(let contentType) = fields[3]
        else { throw SecretServiceFault(SecretError.invalidArgs, "a secret is (oayays)") }
        guard let cipher else { return (value, contentType) }
        do {
            return (try cipher.decrypt(iv: parameters, ciphertext: value), contentType)
        } catch {
            throw SecretServiceFault(SecretError.invalidArgs, "the secret does not decrypt under this session")
        }
    }
}

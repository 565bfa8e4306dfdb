import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// The Secret Service's DH session (SPEC.md §17.2): both sides derive one key; bad public values
/// are refused. Interoperability with libsecret and Python's secretstorage is tested end to end.
final class SecretSessionCipherTests: XCTestCase {
    func testClientAndServiceAgreeOnTheKey() throws {
        let client = try SecretSessionCipher.client()
        let service = try SecretSessionCipher(peerPublicKey: client.publicKey)
        let clientCipher = try client.complete(service.publicKey)
        let (iv, ciphertext) = try service.encrypt(Array("a secret".utf8))
        XCTAssertEqual(ciphertext.count, 16)
        XCTAssertEqual(try clientCipher.decrypt(iv: iv, ciphertext: ciphertext), Array("a secret".utf8))
        let (iv2, sealed) = try clientCipher.encrypt([])
        XCTAssertEqual(try service.decrypt(iv: iv2, ciphertext: sealed), [])
    }

    func testPublicValuesThatForceTheSecretAreRefused() throws {
        let prime = try XCTUnwrap(Hex.decode(Self.primeHex))
        var minusOne = prime
        minusOne[minusOne.count - 1] -= 1
        for value in [[], [0], [1], minusOne, prime, [UInt8](repeating: 0xFF, count: 128), [UInt8](repeating: 1, count: 129)] {
            XCTAssertThrowsError(try SecretSessionCipher(peerPublicKey: value))
        }
        XCTAssertNoThrow(try SecretSessionCipher(peerPublicKey: [2]))
    }

    func testWrongPaddingIsRefused() throws {
        let client = try SecretSessionCipher.client()
        let service = try SecretSessionCipher(peerPublicKey: client.publicKey)
        let (iv, ciphertext) = try service.encrypt(Array("x".utf8))
        let other = try SecretSessionCipher(peerPublicKey: try SecretSessionCipher.client().publicKey)
        XCTAssertThrowsError(try other.decrypt(iv: iv, ciphertext: ciphertext + [UInt8](repeating: 0, count: 1)))
        XCTAssertThrowsError(try service.decrypt(iv: [0], ciphertext: ciphertext))
    }

    static let primeHex = "ffffffffffffffffc90fdaa22168c234c4c6628b80dc1cd129024e088a67cc74020bbea63b139b22514a08798e3404ddef9519b3cd3a431b302b0a6df25f14374fe1356d6d51c245e485b576625e7ec6f44c42e9a637ed6b0bff5cb6f406b7edee386bfb5a899fa5ae9f24117c4b1fe649286651ece65381ffffffffffffffff"
}

import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// Known answers for every libsodium call Coffer makes, from vectors made by an independent
/// implementation (PyNaCl + hashlib, SPEC.md §18).
final class PrimitiveVectorTests: XCTestCase {
    func testXChaCha20Poly1305MatchesVectorAndRoundTrips() throws {
        let vector = try VectorFile.load("primitives/aead_xchacha20poly1305.vector")
        let key = try SecureBytes(copying: vector.hex("key"))
        let sealed = try XChaCha20Poly1305.seal(
            vector.hex("plaintext"), key: key, nonce: vector.hex("nonce"), associatedData: vector.hex("ad"))
        XCTAssertEqual(Hex.encode(sealed), vector.string("ciphertext"))
        let opened = try XChaCha20Poly1305.open(
            sealed[...], key: key, nonce: vector.hex("nonce")[...], associatedData: vector.hex("ad"))
        XCTAssertEqual(opened.withUnsafeBytes { Array($0) }, vector.hex("plaintext"))
    }

    func testXChaCha20Poly1305RejectsEveryChangedInput() throws {
        let vector = try VectorFile.load("primitives/aead_xchacha20poly1305.vector")
        let key = try SecureBytes(copying: vector.hex("key"))
        let (nonce, ad, sealed) = (vector.hex("nonce"), vector.hex("ad"), vector.hex("ciphertext"))
        func opens(_ ciphertext: [UInt8], _ nonce: [UInt8], _ ad: [UInt8], _ key: SecureBytes) -> Bool {
            (try? XChaCha20Poly1305.open(ciphertext[...], key: key, nonce: nonce[...], associatedData: ad)) != nil
        }
        XCTAssertTrue(opens(sealed, nonce, ad, key))
        for index in sealed.indices {
            var flipped = sealed
            flipped[index] ^= 0x01
            XCTAssertFalse(opens(flipped, nonce, ad, key), "ciphertext byte \(index)")
        }
        var otherNonce = nonce
        otherNonce[0] ^= 0x80
        XCTAssertFalse(opens(sealed, otherNonce, ad, key))
        XCTAssertFalse(opens(sealed, nonce, ad + [0], key))
        XCTAssertFalse(opens(Array(sealed.dropLast()), nonce, ad, key))
        XCTAssertFalse(opens([], nonce, ad, key))
        XCTAssertFalse(opens(sealed, nonce, ad, try SecureBytes.random(count: 32)))
    }

    func testArgon2idMatchesVectors() throws {
        for name in ["argon2id_minimum", "argon2id_two_passes"] {
            let vector = try VectorFile.load("primitives/\(name).vector")
            let key = try Argon2id.deriveKey(
                length: 32, password: SecureBytes(copying: vector.hex("password")),
                salt: vector.hex("salt"),
                parameters: KDFParameters(opsLimit: UInt32(vector.int("opslimit")), memLimit: UInt64(vector.int("memlimit"))))
            XCTAssertEqual(key.withUnsafeBytes { Hex.encode($0) }, vector.string("key"), name)
        }
    }

    func testArgon2idRefusesWrongSaltLength() {
        XCTAssertThrows(try Argon2id.deriveKey(
            length: 32, password: Fixture.secret(), salt: [1, 2, 3], parameters: KDFPolicy.testingParameters)
        ) { $0 as? CryptoError == .invalidLength(expected: 16, actual: 3) }
    }

    func testSubkeysMatchIndependentBLAKE2bDerivation() throws {
        let vector = try VectorFile.load("primitives/kdf_subkeys.vector")
        let master = try SecureBytes(copying: vector.hex("master"))
        for id in 1...3 {
            let subkey = try SubkeyDerivation.derive(UInt64(id), from: master)
            XCTAssertEqual(subkey.withUnsafeBytes { Hex.encode($0) }, vector.string("subkey\(id)"))
        }
    }

    func testBLAKE2bMatchesVector() throws {
        let vector = try VectorFile.load("primitives/blake2b.vector")
        let input = vector.hex("input")
        XCTAssertEqual(Hex.encode(try BLAKE2b.hash(input)), vector.string("hash32"))
        XCTAssertEqual(Hex.encode(try BLAKE2b.hash(input, length: 16)), vector.string("hash16"))
        XCTAssertEqual(Hex.encode(try BLAKE2b.hash(input, key: SecureBytes(copying: vector.hex("key")))), vector.string("keyed32"))
    }

    /// The index's variable-time unpadding agrees with sodium_unpad on every padding, valid or not.
    func testVariableTimeUnpaddingAgreesWithSodium() throws {
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<2_000 {
            let blockSize = [1, 16, 512][trial % 3]
            var padded = try Padding.pad((0..<Int.random(in: 0...600, using: &generator)).map { _ in UInt8.random(in: 0...255) }, blockSize: blockSize)
            if trial % 2 == 1 {  // corrupt: flip a byte in the last block
                padded[padded.count - 1 - Int.random(in: 0..<min(blockSize, padded.count), using: &generator)] ^= UInt8.random(in: 1...255)
            }
            let constant = padded.withUnsafeBytes { try? Padding.unpaddedLength(of: $0, blockSize: blockSize) }
            let variable = padded.withUnsafeBytes { try? Padding.unpaddedLengthInVariableTime(of: $0, blockSize: blockSize) }
            XCTAssertEqual(constant, variable, "trial \(trial)")
        }
        for malformed: [UInt8] in [[], [0], [0, 0, 0, 0], [0x80, 0, 0, 1]] {
            XCTAssertNil(malformed.withUnsafeBytes { try? Padding.unpaddedLengthInVariableTime(of: $0, blockSize: 4) })
        }
    }

    func testPaddingMatchesVectorAndRejectsMalformedPadding() throws {
        let vector = try VectorFile.load("primitives/padding.vector")
        XCTAssertEqual(try Padding.pad(vector.hex("input"), blockSize: 512), vector.hex("padded"))
        XCTAssertEqual(try Padding.pad(vector.hex("input511"), blockSize: 512), vector.hex("padded511"))
        let padded = vector.hex("padded")
        XCTAssertEqual(try padded.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 512) }, 3)
        let noMarker = [UInt8](repeating: 0, count: 512)
        XCTAssertThrows(try noMarker.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: 512) }) {
            $0 as? CryptoError == .invalidPadding
        }
    }
}

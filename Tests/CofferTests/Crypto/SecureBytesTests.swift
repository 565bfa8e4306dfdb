import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
import XCTest

/// Secrets are redacted, compared by content, and (up to 64 bytes) share one guarded page whose
/// slots are wiped when their secret is released.
final class SecureBytesTests: XCTestCase {
    func testSmallSecretsShareTheGuardedPageAndAreWipedOnRelease() throws {
        var secret: SecureBytes? = try SecureBytes(copying: [UInt8](repeating: 0xA5, count: 32))
        let address = try XCTUnwrap(secret).withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
        XCTAssertTrue(SecretSlots.owns(address))
        secret = nil
        let wiped = UnsafeRawBufferPointer(start: address, count: SecretSlots.slotLength)
        XCTAssertTrue(wiped.allSatisfy { $0 == 0 }, "a released slot keeps secret bytes")
        let reused = try SecureBytes(count: 16)
        reused.withUnsafeBytes { XCTAssertTrue($0.allSatisfy { $0 == 0 }) }
    }

    func testLongSecretsAndAFullPageFallBackToTheirOwnAllocation() throws {
        let long = try SecureBytes(copying: [UInt8](repeating: 7, count: SecretSlots.slotLength + 1))
        long.withUnsafeBytes { XCTAssertFalse(SecretSlots.owns(UnsafeMutableRawPointer(mutating: $0.baseAddress!))) }
        // More secrets alive at once than there are slots: every one is distinct and intact.
        let many = try (0..<(SecretSlots.slotCount + 10)).map { index in
            try SecureBytes(copying: [UInt8](repeating: UInt8(index), count: 32))
        }
        for (index, secret) in many.enumerated() {
            secret.withUnsafeBytes { XCTAssertTrue($0.allSatisfy { $0 == UInt8(index) }) }
        }
        let addresses = Set(many.map { $0.withUnsafeBytes { Int(bitPattern: $0.baseAddress!) } })
        XCTAssertEqual(addresses.count, many.count)
    }

    func testDescriptionIsRedacted() throws {
        let secret = Fixture.secret("hunter2")
        XCTAssertFalse("\(secret)".contains("hunter2"))
        XCTAssertFalse(String(reflecting: secret).contains("hunter2"))
        XCTAssertEqual(secret.description, "SecureBytes(7 bytes, redacted)")
    }

    func testEqualityComparesContents() throws {
        XCTAssertEqual(Fixture.secret("abc"), Fixture.secret("abc"))
        XCTAssertNotEqual(Fixture.secret("abc"), Fixture.secret("abd"))
        XCTAssertNotEqual(Fixture.secret("abc"), Fixture.secret("abcd"))
    }

    func testRandomSecretsDiffer() throws {
        XCTAssertNotEqual(try SecureBytes.random(count: 32), try SecureBytes.random(count: 32))
    }
}

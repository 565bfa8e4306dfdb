import Foundation
import XCTest

import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferFormat
@testable import CofferSSHAgent
@testable import CofferHostKit

/// The key formats against OpenSSH itself: a key file Coffer writes is one ssh-keygen reads,
/// and one ssh-keygen writes is one Coffer reads; fingerprints agree; RFC 8032's vector signs.
final class OpenSSHKeyTests: XCTestCase {
    func testRFC8032FirstVectorSigns() throws {
        // RFC 8032 §7.1, TEST 1: the empty message.
        let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
        let publicKey = Hex.decode("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")!
        let key = try Ed25519SigningKey(secretKey: SecureBytes(copying: seed + publicKey), publicKey: publicKey)
        XCTAssertEqual(try key.sign([]), Hex.decode("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")!)
        XCTAssertThrowsError(try Ed25519SigningKey(secretKey: SecureBytes(copying: seed + publicKey), publicKey: Array(repeating: 1, count: 32)),
                             "halves that disagree are refused")
    }

    func testCofferKeyFilesAreOpenSSHKeyFiles() throws {
        let key = try Ed25519SigningKey.generate()
        let text = try OpenSSHPrivateKey.encode(key, comment: "laptop")
        let directory = NSTemporaryDirectory() + "coffer-key-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try text.write(toFile: directory + "/id", atomically: true, encoding: .utf8)
        chmod(directory + "/id", 0o600)
        let derived = try tool("/usr/bin/ssh-keygen", ["-y", "-f", directory + "/id"])
        XCTAssertEqual(derived.trimmingCharacters(in: .whitespacesAndNewlines),
                       SSHPublicKey(ed25519: key.publicKey).authorizedKeysText + " laptop", "ssh-keygen reads Coffer's file")
        let fingerprint = try tool("/usr/bin/ssh-keygen", ["-l", "-f", directory + "/id"])
        XCTAssertTrue(fingerprint.contains(SSHPublicKey(ed25519: key.publicKey).fingerprint), fingerprint)

        XCTAssertEqual(try tool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "made by openssh", "-f", directory + "/theirs"]), "")
        let (theirs, comment) = try OpenSSHPrivateKey.decode(String(contentsOfFile: directory + "/theirs", encoding: .utf8))
        XCTAssertEqual(comment, "made by openssh")
        let line = try String(contentsOfFile: directory + "/theirs.pub", encoding: .utf8)
        XCTAssertEqual(SSHPublicKey(authorizedKeysLine: line)?.ed25519Key, theirs.publicKey)
        let signature = try theirs.sign(Array("message".utf8))
        XCTAssertTrue(Ed25519SigningKey.isValidSignature(signature, of: Array("message".utf8), publicKey: theirs.publicKey))
    }

    func testMalformedKeyFilesAreRefused() throws {
        let good = try OpenSSHPrivateKey.encode(Ed25519SigningKey.generate(), comment: "x")
        XCTAssertThrowsError(try OpenSSHPrivateKey.decode("not a key")) { XCTAssertEqual($0 as? OpenSSHKeyError, .notAPrivateKey) }
        let lines = good.split(separator: "\n").map(String.init)
        for cut in [2, 3] {
            let truncated = (lines.prefix(cut) + [lines.last!]).joined(separator: "\n")
            XCTAssertThrowsError(try OpenSSHPrivateKey.decode(truncated), "cut after \(cut) lines")
        }
        var flipped = Array(lines[2].utf8)
        flipped[10] = flipped[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let tampered = ([lines[0], lines[1], String(decoding: flipped, as: UTF8.self)] + lines.dropFirst(3)).joined(separator: "\n")
        XCTAssertThrowsError(try OpenSSHPrivateKey.decode(tampered), "a changed byte in the private section")
    }

    private func tool(_ path: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, arguments.joined(separator: " "))
        return String(decoding: data, as: UTF8.self)
    }
}

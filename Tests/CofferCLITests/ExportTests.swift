import Coffer
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import XCTest

/// `coffer export` loses nothing, or says what it cannot carry (issue 49, item 2): every kind of
/// item, every member, through each format and back through `coffer import` into another vault.
final class ExportTests: XCTestCase {
    /// One item of every kind with every member a record has.
    static func everyKind(in vault: Vault) throws {
        let key = try PasskeyPrivateKey.generate(.edDSA).pkcs8()
        let passkey = Passkey(credentialID: Array(repeating: 3, count: 16), relyingPartyIdentifier: "example.com", userHandle: [1, 2],
                              userName: "ann", userDisplayName: "Ann", privateKey: key, created: Date(timeIntervalSince1970: 1_700_000_000))
        let history = [PasswordHistoryEntry(password: "pw-0", replaced: Date(timeIntervalSince1970: 1_600_000_000))]
        try vault.add([
            RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "https://login.example.com/"), CredentialServiceIdentifier(parsing: "example.org")],
                        user: "ann", password: "pw, \"quoted\"\r\nand a line", notes: "line one\nline two",
                        fields: [RecordField(name: "PIN", value: "1234", hidden: true), RecordField(name: "team: core", value: "a\nb")],
                        matchMode: .site, name: "Example", tags: ["work", "two words"],
                        otp: "otpauth://totp/Example:ann?secret=JBSWY3DPEHPK3PXP&issuer=Example&digits=8&period=60&algorithm=SHA256",
                        passwordHistory: history),
            RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "example.com")], user: "ann", password: "", passkey: passkey),
            RecordDraft(serviceIdentifiers: [], user: "", password: "", notes: "a note", name: "Note", kind: .note, tags: ["n"]),
            RecordDraft(serviceIdentifiers: [], user: "", password: "generated-1", fields: [
                RecordField(name: "number", value: "5555444433331111", hidden: true), RecordField(name: "code", value: "123", hidden: true),
                RecordField(name: "brand", value: "Mastercard"),
            ], name: "Card", kind: .card),
            RecordDraft(serviceIdentifiers: [], user: "", password: "", fields: [RecordField(name: "firstName", value: "Ann"), RecordField(name: "city", value: "Oslo")],
                        name: "Me", kind: .identity),
            // A card and an identity with every member (SPEC.md §6.8): a start month without its
            // year, a region that is no ISO 3166-2 code, so CXF carries some in its extension.
            RecordDraft(ItemContent(kind: .card, name: "Travel card", card: CardMember(
                cardholder: "Ann Example", number: "4111111111111111", brand: "Visa", expiryMonth: 7, expiryYear: 2029, securityCode: "123",
                pin: "0000", startMonth: 3, issueNumber: "2"))),
            RecordDraft(ItemContent(kind: .identity, name: "Home", user: "ann", identity: IdentityMember(
                title: "Dr", givenName: "Ann", middleName: "Q", familyName: "Example", company: "Example AS",
                addressLines: ["1 Storgata", "Apt 2"], city: "Oslo", region: "Oslo county", postalCode: "0150", country: "NO",
                phone: "+47 22 00 00 00", email: "ann@example.com", nationalIdentifier: "01017012345", passportNumber: "P123",
                licenseNumber: "L456"))),
            RecordDraft(serviceIdentifiers: [], user: "", password: "", fields: [RecordField(name: "privateKey", value: "-----BEGIN…", hidden: true)],
                        name: "Key", kind: .sshKey),
            RecordDraft(serviceIdentifiers: [], user: "", password: "keyring-secret", name: "Mail", kind: .secret,
                        secretService: SecretServiceMember(collection: "login", attributes: ["service": "imap"], creator: "/usr/bin/secret-tool")),
            RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "hotp.example")], user: "h", password: "p",
                        otp: "otpauth://hotp/h?secret=JBSWY3DPEHPK3PXP&counter=5"),
        ])
    }

    func testEveryFormatCarriesEveryKindBackThroughImport() throws {
        let cli = CLIHarness()
        cli.initVault()
        let vault = try unlockedVault(of: cli)
        try Self.everyKind(in: vault)
        let original = try vault.allRecords().map(RecordDraft.init).sorted { $0.name + $0.user < $1.name + $1.user }
        for format in ["csv", "json", "cxf"] {
            let exported = cli.run(["export", "--format", format, "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n")
            XCTAssertEqual(exported.code, 0, "\(format): \(exported.stderr)")
            XCTAssertEqual(exported.stderr, "", "\(format): nothing left out")
            let file = cli.container + "-export.\(format)"
            try exported.stdout.write(toFile: file, atomically: true, encoding: .utf8)
            let other = CLIHarness()
            other.initVault()
            let imported = other.run(["import", file, "--password-stdin"], stdin: CLIHarness.master + "\n")
            XCTAssertEqual(imported.code, 0, "\(format): \(imported.stderr)")
            let dropped = imported.stderr.split(separator: "\n").filter { $0.contains("dropped") && !$0.contains("id, revision") }
            XCTAssertEqual(dropped, [], "\(format): only the old vault's ids and revisions are not carried over")
            let copied = try unlockedVault(of: other).allRecords().map(RecordDraft.init).sorted { $0.name + $0.user < $1.name + $1.user }
            XCTAssertEqual(copied.count, original.count, format)
            for (copy, record) in zip(copied, original) {
                XCTAssertEqual(ItemExporter.differences(record, copy), [], "\(format): '\(record.name)'")
            }
        }
        // The CSV still opens as Chrome's: its first five columns.
        let csv = cli.run(["export", "--format", "csv", "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout
        XCTAssertTrue(csv.hasPrefix("name,url,username,password,note,"), csv)
    }

    /// What a format cannot carry is named, and nothing is written without `--lossy`.
    func testWhatAFormatCannotCarryIsNamedAndRefusedUnlessLossy() throws {
        let cli = CLIHarness()
        cli.initVault()
        let vault = try unlockedVault(of: cli)
        let key = try PasskeyPrivateKey.generate(.edDSA).pkcs8()
        var counted = Passkey(credentialID: Array(repeating: 4, count: 16), relyingPartyIdentifier: "counted.example", userHandle: [1],
                              userName: "c", userDisplayName: "", privateKey: key, created: Date(timeIntervalSince1970: 1_700_000_000))
        counted.signCount = 7
        try vault.add([
            RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "counted.example")], user: "c", password: "pc", name: "Counted", passkey: counted),
            RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "plain.example")], user: "p", password: "pp", name: "Plain"),
        ])
        let refused = cli.run(["export", "--format", "cxf", "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(refused.code, 1, refused.stderr)
        XCTAssertEqual(refused.stdout, "", "nothing written")
        XCTAssertTrue(refused.stderr.contains("'Counted': cxf cannot carry its passkey"), refused.stderr)
        XCTAssertFalse(refused.stderr.contains("'Plain'"), refused.stderr)
        let lossy = cli.run(["export", "--format", "cxf", "--plaintext", "--lossy", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(lossy.code, 0, lossy.stderr)
        XCTAssertTrue(lossy.stderr.contains("'Counted': cxf cannot carry its passkey"), lossy.stderr)
        XCTAssertTrue(lossy.stdout.contains("plain.example"))
        // json and csv carry the counter.
        for format in ["json", "csv"] {
            XCTAssertEqual(cli.run(["export", "--format", format, "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n").code, 0, format)
        }
    }

    /// CSV and JSON are written a part at a time (a `records/<xx>` directory each, SPEC.md §12),
    /// checked in a first pass and written in a second: the output is the whole export's, byte
    /// for byte, and what the format cannot carry is still refused before anything is written.
    func testAnExportInPartsIsTheWholeExportByteForByte() throws {
        let cli = CLIHarness()
        cli.initVault()
        let vault = try unlockedVault(of: cli)
        try Self.everyKind(in: vault)
        try vault.add((0..<300).map { RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "site\($0).example")], user: "u\($0)", password: "p\($0)") })
        let records = try vault.allRecords()
        XCTAssertGreaterThan(Set(records.map { $0.id.hex.prefix(2) }).count, 100, "records in many parts")
        for format in [ExportFormat.csv, .json] {
            let exported = cli.run(["export", "--format", format.rawValue, "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n")
            XCTAssertEqual(exported.code, 0, exported.stderr)
            let whole = try ItemExporter.export(records, as: format, accountID: vault.vaultID.bytes).text
            XCTAssertEqual(exported.stdout, whole + "\n", format.rawValue)
        }
        let empty = CLIHarness()
        empty.initVault()
        let header = "name,url,username,password,note,kind,urls,tags,otpauth,fields,match,history,passkey,secretservice,card,identity,created,modified"
        for (format, text) in [("csv", header), ("json", "[]")] {
            XCTAssertEqual(empty.run(["export", "--format", format, "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n").stdout, text + "\n")
        }

        // CSV carries no files: the item is named and nothing is written, unless --lossy.
        let id = try XCTUnwrap(records.first { $0.name == "Note" }).id
        var sent = false
        try vault.attach(name: "scan.pdf", to: id) { buffer in
            guard !sent else { return 0 }
            sent = true
            buffer.storeBytes(of: 0x25, as: UInt8.self)
            return 1
        }
        let refused = cli.run(["export", "--format", "csv", "--plaintext", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(refused.code, 1, refused.stderr)
        XCTAssertEqual(refused.stdout, "", "nothing written")
        XCTAssertTrue(refused.stderr.contains("'Note': csv cannot carry its attachments"), refused.stderr)
        let lossy = cli.run(["export", "--format", "csv", "--plaintext", "--lossy", "--password-stdin"], stdin: CLIHarness.master + "\n")
        XCTAssertEqual(lossy.code, 0, lossy.stderr)
        XCTAssertEqual(lossy.stdout.utf8.count, try ItemExporter.export(vault.allRecords(), as: .csv, accountID: vault.vaultID.bytes).text.utf8.count + 1)
    }

    /// An item changed between the two passes is never written unchecked: the second pass finds
    /// its part's text other than the one checked and stops.
    func testAnItemChangedBetweenThePassesStopsTheExport() throws {
        let cli = CLIHarness()
        cli.initVault()
        let vault = try unlockedVault(of: cli)
        try vault.add((0..<50).map { RecordDraft(serviceIdentifiers: [CredentialServiceIdentifier(parsing: "site\($0).example")], user: "u\($0)", password: "p\($0)") })
        let part = { (group: Int) in try vault.records(inGroup: UInt8(group)) }
        let check = try ItemExporter.checkInParts(256, as: .csv, records: part)
        XCTAssertEqual(check.leftOut, [])
        var written = ""
        try ItemExporter.writeInParts(check, records: part) { written += $0 }
        XCTAssertEqual(written, try ItemExporter.export(vault.allRecords(), as: .csv, accountID: vault.vaultID.bytes).text)
        XCTAssertEqual(written.utf8.count, check.length)

        let changed = try vault.allRecords()[30]
        try vault.updateRecord(withID: changed.id) { $0.password = "changed meanwhile" }
        written = ""
        XCTAssertThrowsError(try ItemExporter.writeInParts(check, records: part) { written += $0 }) { error in
            XCTAssertEqual("\(error)", "the vault changed while it was exported; what was written is incomplete")
        }
        XCTAssertFalse(written.contains("changed meanwhile"), "the unchecked text is never written")
    }
}

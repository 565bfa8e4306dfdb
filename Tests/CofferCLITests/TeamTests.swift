import Coffer
@testable import CofferProvider
@testable import CofferStore
@testable import CofferTeams
@testable import CofferFormat
@testable import CofferCLI
@testable import CofferCredentialHelpers
@testable import CofferTerminalKit
import Foundation
import ScratchDirectories
import XCTest

/// One person: their own HOME, personal vault and master password; their teams live in their
/// own `XDG_DATA_HOME`.
final class TeamPerson {
    let harness: CLIHarness
    let name: String
    let password: String

    /// - Parameter device: another device of `name`'s vault: no vault is made (it is cloned).
    init(_ name: String, root: String, device: String? = nil) {
        self.name = name
        password = "pw of \(name)"
        harness = CLIHarness(base: root + "/" + (device ?? name))
        harness.environment["USER"] = name
        guard device == nil else { return }
        let created = harness.run(["init", "--password-stdin"], stdin: password + "\n")
        precondition(created.code == 0, created.stderr)
    }

    /// A command with this person's master password first on stdin.
    @discardableResult
    func run(_ arguments: [String], stdin: String = "") -> RunResult {
        harness.run(arguments + ["--password-stdin"], stdin: password + "\n" + stdin)
    }

    /// Must succeed.
    @discardableResult
    func must(_ arguments: [String], stdin: String = "", file: StaticString = #filePath, line: UInt = #line) -> RunResult {
        let result = run(arguments, stdin: stdin)
        XCTAssertEqual(result.code, 0, "\(name): coffer \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    var recipient: String { must(["whoami"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) }

    var fingerprint: String {
        let object = (try? JSONSerialization.jsonObject(with: Data(must(["whoami", "--json"]).stdout.utf8))) as? [String: String]
        return object?["fingerprint"] ?? ""
    }

    /// `fill SERVICE`'s password, or the exit code.
    func fill(_ service: String) -> String {
        let result = run(["fill", service])
        return result.code == 0 ? result.stdout.trimmingCharacters(in: .newlines) : "exit \(result.code)"
    }

    var teamContainer: String { harness.environment["XDG_DATA_HOME"]! + "/coffer/group-containers/team.ops" }

    /// This person's personal vault, opened and unlocked through the library.
    func personalVault() throws -> Vault {
        var configuration = VaultConfiguration.standard(environment: harness.environment)
        configuration.kdfPolicy = .relaxedForTesting
        let vault = try Vault.open(GroupContainer(path: harness.container), configuration: configuration)
        try vault.unlock(masterPassword: SecureBytes(copying: Array(password.utf8)))
        return vault
    }
}

/// What every team test starts from: a scratch root and a bare git remote, and the ways to
/// look at a team through the library and at the remote through git.
class TeamTestCase: XCTestCase {
    var root = ""
    var remote = ""

    override func setUpWithError() throws {
        root = ScratchDirectories.make(prefix: "coffer-team")
        remote = root + "/team.git"
        XCTAssertEqual(try runTool("/usr/bin/git", ["init", "-q", "--bare", "-b", "main", remote], environment: ["HOME": root]).code, 0)
    }

    /// Alice founds 'ops' on the remote and adds Bob and Carol, who join it.
    func founded() -> (TeamPerson, TeamPerson, TeamPerson) {
        let alice = TeamPerson("alice", root: root), bob = TeamPerson("bob", root: root), carol = TeamPerson("carol", root: root)
        alice.must(["team", "create", "ops", "--remote", remote])
        alice.must(["team", "add", "ops", bob.recipient, "--as", "bob"])
        alice.must(["team", "add", "ops", carol.recipient, "--as", "carol"])
        for person in [bob, carol] {
            let joined = person.must(["team", "join", remote, "--founder", alice.fingerprint])
            XCTAssertTrue(joined.stderr.contains("founder's fingerprint: \(alice.fingerprint)"), joined.stderr)
        }
        return (alice, bob, carol)
    }

    func git(_ arguments: [String]) throws -> RunResult {
        try runTool("/usr/bin/git", arguments, environment: [
            "HOME": root, "GIT_AUTHOR_NAME": "attacker", "GIT_AUTHOR_EMAIL": "a@example.invalid",
            "GIT_COMMITTER_NAME": "attacker", "GIT_COMMITTER_EMAIL": "a@example.invalid",
        ])
    }

    /// `person`'s team vault, unlocked with their identity through the library.
    func teamVault(of person: TeamPerson) throws -> Vault {
        var configuration = VaultConfiguration.standard(environment: person.harness.environment)
        configuration.kdfPolicy = .relaxedForTesting
        let team = try Vault.open(GroupContainer(path: person.teamContainer), configuration: configuration)
        try team.unlockTeam(identity: person.personalVault().personalIdentity())
        return team
    }

    /// The team's id and record key as `person` holds them, through the library.
    func teamKeys(of person: TeamPerson) throws -> (VaultID, SecureBytes) {
        let team = try teamVault(of: person)
        return (team.vaultID, try team.keys().recordKey)
    }

    func gitBytes(_ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = arguments
        process.environment = ["HOME": root, "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(data)
    }
}

/// Team vaults (SPEC.md §16): three people, a bare git remote, and an attacker who can push.
final class TeamTests: TeamTestCase {
    // MARK: Sharing

    func testThreePeopleShareATeamAndEditItConcurrently() throws {
        let (alice, bob, carol) = founded()
        let members = alice.must(["team", "members", "ops", "--json"]).stdout
        let list = try JSONSerialization.jsonObject(with: Data(members.utf8)) as? [[String: Any]] ?? []
        XCTAssertEqual(list.map { $0["name"] as? String }, ["alice", "bob", "carol"])
        XCTAssertEqual(list.map { $0["admin"] as? Bool }, [true, false, false])
        XCTAssertEqual(list[1]["fingerprint"] as? String, bob.fingerprint)
        XCTAssertEqual(list[1]["addedBy"] as? String, "alice")

        let deploy = alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        alice.must(["add", "own.example", "alice"], stdin: "mine\n")
        alice.must(["team", "sync"])
        for person in [bob, carol] {
            person.must(["team", "sync"])
            XCTAssertEqual(person.fill("github.com"), "d3ploy", "\(person.name) fills the team's login from their own list")
            XCTAssertEqual(person.must(["show", "ops:github.com/deploy", "--json"]).stdout.contains("\"d3ploy\""), true)
        }
        XCTAssertEqual(bob.fill("own.example"), "exit 66", "Alice's own items stay hers")
        let listed = try JSONSerialization.jsonObject(with: Data(bob.must(["list", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        XCTAssertEqual(listed.first { $0["recordIdentifier"] as? String == deploy }?["vault"] as? String, "ops")
        XCTAssertTrue(bob.must(["list"]).stdout.contains("ops:github.com"))
        XCTAssertTrue(bob.must(["search", "deplo"]).stdout.contains("ops:github.com"))
        // Tab: `o` offers the team, `ops:git` what is in it (locked: the team's store).
        bob.harness.environment["COFFER_CONTAINER"] = bob.harness.container
        XCTAssertEqual(bob.harness.run(["__complete", "entry", "o"], container: false).stdout, "ops:\n")
        XCTAssertEqual(bob.harness.run(["__complete", "entry", "ops:git"], container: false).stdout, "ops:github.com\nops:github.com/deploy\n")

        // Bob and Carol change the same login and add one each, before either syncs.
        bob.must(["edit", "ops:github.com/deploy", "--new-password"], stdin: "from-bob\n")
        carol.must(["edit", "ops:github.com/deploy", "--new-password"], stdin: "from-carol\n")
        bob.must(["add", "--team", "ops", "ci.example", "runner"], stdin: "ci\n")
        carol.must(["add", "--team", "ops", "db.example", "admin"], stdin: "db\n")
        bob.must(["team", "sync"]); carol.must(["team", "sync"]); bob.must(["team", "sync"]); alice.must(["team", "sync"])
        for person in [alice, bob, carol] {
            XCTAssertEqual(person.fill("ci.example"), "ci")
            XCTAssertEqual(person.fill("db.example"), "db")
            let shown = try JSONSerialization.jsonObject(with: Data(person.must(["show", "ops:" + deploy, "--json"]).stdout.utf8)) as? [String: Any] ?? [:]
            let history = (shown["passwordHistory"] as? [[String: Any]] ?? []).compactMap { $0["password"] as? String }
            XCTAssertEqual(Set(history + [shown["password"] as? String ?? ""]).isSuperset(of: ["from-bob", "from-carol", "d3ploy"]), true,
                           "\(person.name): both edits kept, one in the history")
        }
        XCTAssertEqual(alice.fill("github.com"), bob.fill("github.com"))

        // Nothing but sealed bytes reaches git.
        for directory in [remote, alice.teamContainer + "/.git", bob.teamContainer + "/.git"] {
            let objects = try git(["--git-dir", directory, "cat-file", "--batch-all-objects", "--batch"])
            for secret in ["github.com", "deploy", "d3ploy", "from-bob", "ci.example", "runner", "alice", "bob", "carol", "ops"] {
                XCTAssertFalse(objects.stdout.contains(secret), "\(directory) holds '\(secret)'")
            }
        }
    }

    func testOnlyAnAdminChangesTheMembersAndAnAdminCanMakeOne() {
        let (alice, bob, carol) = founded()
        let outsider = TeamPerson("dave", root: root)
        let refused = bob.run(["team", "add", "ops", outsider.recipient, "--as", "dave"])
        XCTAssertEqual(refused.code, 77, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("only an admin"), refused.stderr)
        alice.must(["team", "admin", "ops", "bob"])
        bob.must(["team", "sync"])
        bob.must(["team", "add", "ops", outsider.recipient, "--as", "dave"])
        outsider.must(["team", "join", remote, "--founder", alice.fingerprint])
        carol.must(["team", "sync"])
        XCTAssertTrue(carol.must(["team", "members", "ops"]).stdout.contains("dave\tmember"))
        // A wrong fingerprint, a recipient with a typo: refused.
        let stranger = TeamPerson("erin", root: root)
        let notAdded = stranger.run(["team", "join", remote, "--founder", alice.fingerprint])
        XCTAssertEqual(notAdded.code, 77, notAdded.stderr)
        var typo = Array(stranger.recipient)
        typo[20] = typo[20] == "a" ? "b" : "a"
        XCTAssertEqual(alice.run(["team", "add", "ops", String(typo)]).code, 64)
        alice.must(["team", "add", "ops", stranger.recipient, "--as", "erin"])
        let wrongFounder = stranger.run(["team", "join", remote, "--founder", "12345 67890 12345"])
        XCTAssertEqual(wrongFounder.code, 65, wrongFounder.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: stranger.teamContainer), "a refused join leaves nothing")
        stranger.must(["team", "join", remote, "--founder", alice.fingerprint])
    }

    /// Two admins change the list at the same time: the second to sync loses the race; its
    /// change is dropped and reported (not refused as an attack), records it re-sealed under a
    /// key that lost stay readable, and the change made again lands on top.
    func testTwoAdminsChangingTheListAtOnce() throws {
        let (alice, bob, carol) = founded()
        let dave = TeamPerson("dave", root: root), erin = TeamPerson("erin", root: root)
        alice.must(["team", "admin", "ops", "bob"])
        alice.must(["add", "--team", "ops", "shared.example", "svc"], stdin: "s1\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"])
        // Bob, before syncing again: adds Dave and removes Carol, here only.
        let bobsTeam = try teamVault(of: bob)
        let identity = try bob.personalVault().personalIdentity()
        try bobsTeam.addTeamMember(TeamRecipient(text: dave.recipient), name: "dave", admin: false, by: identity)
        let carolMember = try XCTUnwrap(bobsTeam.teamMembership().members.first { $0.name == "carol" })
        _ = try bobsTeam.removeTeamMember(carolMember, by: identity)
        // Meanwhile Alice adds Erin and pushes.
        alice.must(["team", "add", "ops", erin.recipient, "--as", "erin"])
        let synced = bob.must(["team", "sync"])
        XCTAssertTrue(synced.stderr.contains("not made here: add dave, remove carol"), synced.stderr)
        XCTAssertEqual(bob.fill("shared.example"), "s1", "what Bob re-sealed under his lost key is re-sealed again")
        let members = bob.must(["team", "members", "ops"]).stdout
        XCTAssertTrue(members.contains("erin") && members.contains("carol") && !members.contains("dave"), members)
        // Made again, on top of Alice's change.
        bob.must(["team", "add", "ops", dave.recipient, "--as", "dave"])
        alice.must(["team", "sync"])
        XCTAssertTrue(alice.must(["team", "members", "ops"]).stdout.contains("dave"))
        XCTAssertEqual(alice.fill("shared.example"), "s1")
        carol.must(["team", "sync"])
        XCTAssertEqual(carol.fill("shared.example"), "s1")
    }

    /// A team verifies clean, with its key file judged; a backup holds that file, so the team
    /// restored from it opens for its members as before; a damaged key file is named.
    func testATeamVerifiesAndItsBackupRestoresAsATeam() throws {
        let (alice, _, _) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n")
        func inTeam(_ arguments: [String]) -> RunResult {
            alice.harness.run(arguments + ["--group", "team.ops", "--password-stdin"], stdin: alice.password + "\n", container: false)
        }
        XCTAssertEqual(inTeam(["verify"]).code, 0, inTeam(["verify"]).stderr)
        let backup = root + "/ops-backup.tar"
        XCTAssertEqual(inTeam(["backup", backup]).code, 0)
        XCTAssertEqual(inTeam(["restore", backup, "--force"]).code, 0)
        XCTAssertEqual(alice.fill("github.com"), "d3ploy")
        XCTAssertTrue(alice.must(["team", "members", "ops"]).stdout.contains("carol"))
        var bytes = try Data(contentsOf: URL(fileURLWithPath: alice.teamContainer + "/team.coffer"))
        bytes[bytes.count - 5] ^= 1
        try bytes.write(to: URL(fileURLWithPath: alice.teamContainer + "/team.coffer"))
        let damaged = inTeam(["verify"])
        XCTAssertEqual(damaged.code, 65, damaged.stderr)
        XCTAssertTrue(damaged.stdout.contains("team.coffer") || damaged.stderr.contains("team.coffer"), damaged.stdout + damaged.stderr)
    }

    /// Unlocking one's vault unlocks one's teams; `coffer lock` locks them too: no team
    /// password is released afterwards, and nothing is asked without a terminal.
    func testLockingOnesVaultLocksOnesTeams() throws {
        let (alice, _, _) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n")
        defer { alice.harness.run(["lock"]) }
        alice.must(["unlock"])
        XCTAssertEqual(alice.harness.run(["fill", "github.com", "--no-interaction"]).stdout, "d3ploy\n", "the owner's session opens the team")
        XCTAssertEqual(alice.harness.run(["lock"]).code, 0)
        let locked = alice.harness.run(["fill", "github.com", "--no-interaction"])
        XCTAssertEqual(locked.code, 75, locked.stderr)
        XCTAssertEqual(locked.stdout, "")
    }

    /// A team's session lives with its owner's (SPEC.md §16.6): unlocking a team unlocks one's
    /// own vault too — with one's own password — and locking one's vault ends both.
    func testUnlockingATeamUnlocksOnesVaultAndLockingItEndsBoth() throws {
        let (alice, _, _) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n")
        alice.must(["add", "gitlab.com", "alice"], stdin: "m1ne\n")
        defer { alice.harness.run(["lock"]) }
        let unlocked = alice.harness.run(["--group", "team.ops", "unlock", "--password-stdin"], stdin: alice.password + "\n", container: false)
        XCTAssertEqual(unlocked.code, 0, unlocked.stderr)
        XCTAssertEqual(alice.harness.run(["--group", "team.ops", "status", "--json"], container: false).stdout.contains("\"locked\":false"), true)
        XCTAssertEqual(alice.harness.run(["fill", "ops:github.com", "--no-interaction"]).stdout, "d3ploy\n")
        XCTAssertEqual(alice.harness.run(["fill", "gitlab.com", "--no-interaction"]).stdout, "m1ne\n", "one's own vault is unlocked too")
        XCTAssertEqual(alice.harness.run(["lock"]).code, 0)
        XCTAssertEqual(alice.harness.run(["fill", "ops:github.com", "--no-interaction"]).code, 75, "locking one's vault locks the team")
    }

    /// One's identity comes from one's vault: a second device of Bob's vault (a clone) joins
    /// the team with no admin's help, and fills from it.
    func testAnotherDeviceOfOnesVaultJoinsWithoutAnAdmin() throws {
        let (alice, bob, _) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n")
        alice.must(["team", "sync"])
        let personalRemote = root + "/bob-personal.git"
        XCTAssertEqual(try runTool("/usr/bin/git", ["init", "-q", "--bare", "-b", "main", personalRemote], environment: ["HOME": root]).code, 0)
        bob.must(["sync", "remote", personalRemote])
        bob.must(["sync"])
        let desktop = TeamPerson("bob", root: root, device: "bob-desktop")
        let cloned = desktop.harness.run(["clone", personalRemote, "--password-stdin", "--container", desktop.harness.container],
                                         stdin: desktop.password + "\n", container: false)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        XCTAssertEqual(desktop.recipient, bob.recipient)
        desktop.must(["team", "join", remote, "--founder", alice.fingerprint])
        XCTAssertEqual(desktop.fill("github.com"), "d3ploy")
    }

    // MARK: Removal

    func testRemovalRotatesTheKeyAndTheRemovedMemberCannotOpenWhatFollows() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "old-secret\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"]); carol.must(["team", "sync"])
        let carolsOldKey = try teamKeys(of: carol)

        let removed = alice.must(["team", "remove", "ops", "carol"])
        XCTAssertTrue(removed.stderr.contains("ops:github.com"), "the items Carol could read are listed: \(removed.stderr)")
        XCTAssertTrue(alice.run(["audit"]).stdout.contains("exposed\tops:github.com\treadable by carol"), "audit flags them until changed")
        alice.must(["add", "--team", "ops", "after.example", "root"], stdin: "new-secret\n")
        alice.must(["team", "sync"])

        bob.must(["team", "sync"])
        XCTAssertEqual(bob.fill("after.example"), "new-secret")
        XCTAssertEqual(bob.fill("github.com"), "old-secret")
        XCTAssertFalse(bob.must(["team", "members", "ops"]).stdout.contains("carol"))

        let refused = carol.run(["team", "sync"])
        XCTAssertEqual(refused.code, 77, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("you were removed from team 'ops'"), refused.stderr)
        XCTAssertTrue(carol.must(["show", "ops:github.com"]).stdout.hasPrefix("old-secret\n"), "what Carol had, she keeps (SPEC.md §16.4)")
        XCTAssertEqual(carol.fill("github.com"), "exit 66", "but a team she was removed from no longer fills (SPEC.md §16.6)")
        XCTAssertEqual(carol.fill("after.example"), "exit 66")
        // Every record on the remote now is sealed under a key Carol never had.
        let files = try git(["--git-dir", remote, "ls-tree", "-r", "--name-only", "main", "records"]).stdout.split(separator: "\n")
        XCTAssertEqual(files.count, 2)
        for path in files {
            let bytes = try gitBytes(["--git-dir", remote, "show", "main:" + path])
            let id = try RecordID(hex: String(path.split(separator: "/").last!))
            XCTAssertThrowsError(try RecordSealing.open(bytes, id: id, vaultID: carolsOldKey.0, key: carolsOldKey.1), "\(path)")
        }
        // Changing the password clears the audit's flag (times are whole seconds: a change in the
        // second of the removal counts as before it).
        Thread.sleep(forTimeInterval: 1.1)
        alice.must(["edit", "ops:github.com/deploy", "--new-password"], stdin: "rotated\n")
        let audit = alice.run(["audit"]).stdout
        XCTAssertFalse(audit.contains("exposed\tops:github.com"), audit)
    }

    /// A team item's files travel with it (issue 57), and a removal's rotation re-seals the
    /// records only: every attachment file on the remote is the same object after it, yet what
    /// follows stays out of the removed member's reach (the key is in the re-sealed record).
    func testAttachmentsTravelInATeamAndARemovalReSealsOnlyTheRecords() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "vpn.example", "svc"], stdin: "pw\n")
        let file = root + "/client.ovpn"
        try Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: URL(fileURLWithPath: file))
        alice.must(["attach", "ops:vpn.example", file])
        alice.must(["team", "sync"]); bob.must(["team", "sync"]); carol.must(["team", "sync"])
        let out = root + "/bob.ovpn"
        bob.must(["attachment", "get", "ops:vpn.example", "client.ovpn", "-o", out])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: file)))
        let listing = { try self.git(["--git-dir", self.remote, "ls-tree", "-r", "main", "attachments"]).stdout }
        let before = try listing()
        XCTAssertEqual(before.split(separator: "\n").count, 1)

        alice.must(["team", "remove", "ops", "carol"])
        alice.must(["team", "sync"])
        XCTAssertEqual(try listing(), before, "the file is the same object: only records were re-sealed")
        bob.must(["team", "sync"])
        try FileManager.default.removeItem(atPath: out)
        bob.must(["attachment", "get", "ops:vpn.example", "client.ovpn", "-o", out])
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    // MARK: An attacker who can push

    /// Someone who can push to the remote but is no member (the forge's admin, a thief of a
    /// deploy key) and a member who is no admin try to change the list; each is refused (65)
    /// and nothing is merged.
    func testForgedForkedAndRolledBackMemberListsAreRefused() throws {
        let (alice, bob, carol) = founded()
        alice.must(["add", "--team", "ops", "github.com", "deploy"], stdin: "d3ploy\n")
        alice.must(["team", "sync"]); bob.must(["team", "sync"]); carol.must(["team", "sync"])
        let good = try git(["--git-dir", remote, "rev-parse", "main"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let current = try TeamKeyFile.decode(try gitBytes(["--git-dir", remote, "show", "main:team.coffer"]))
        let attacker = try PersonalIdentity(keys: VaultKeys(vaultKey: SecureBytes.random(count: 32)))
        // What Carol, a member who is no admin, can read and re-seal.
        let carolsTeam = try teamVault(of: carol)
        let keys = try carolsTeam.keys()
        let membership = try carolsTeam.teamMembership()
        let recipients = membership.members.map(\.recipient)
        func entry(_ action: MembershipEntry.Action, subject: TeamRecipient, signer: Ed25519SigningKey, on chain: [MembershipEntry]) throws -> MembershipEntry {
            var entry = MembershipEntry(
                action: action, isAdmin: false, sequence: UInt64(chain.count), time: 1, previousHash: chain.last!.hash, subject: subject,
                keyID: chain.last!.keyID, signer: [], name: "mallory", teamName: "", signature: [])
            try entry.sign(with: signer, teamID: current.teamID)
            return entry
        }
        func sealed(_ entries: [MembershipEntry], _ recipients: [TeamRecipient], key: VaultKeys = keys) throws -> TeamKeyFile {
            try TeamKeys.seal(key, teamID: current.teamID, entries: entries, recipients: recipients)
        }
        let carolIdentity = try carol.personalVault().personalIdentity()
        let slot = TeamKeyFile.Slot(slotID: TeamKeyFile.slotID(of: attacker.recipient.signingKey, teamID: current.teamID),
                                    sealedKey: try SealedBoxKeyPair.seal(SecureBytes.random(count: 32), to: attacker.recipient.receivingKey))
        var attacks: [(String, TeamKeyFile)] = []
        // An outsider adds a slot for their own key.
        var planted = current
        planted.slots.append(slot)
        attacks.append(("a planted slot", planted))
        // An outsider writes a list of their own under a key of their own, sealed to Bob.
        let ownKey = try VaultKeys(vaultKey: SecureBytes.random(count: 32))
        var founding = MembershipEntry(
            action: .found, isAdmin: true, sequence: 0, time: 1, previousHash: [UInt8](repeating: 0, count: 32), subject: attacker.recipient,
            keyID: try TeamKeys.keyID(of: ownKey), signer: [], name: "alice", teamName: "ops", signature: [])
        try founding.sign(with: attacker.signing, teamID: current.teamID)
        attacks.append(("a whole list of the attacker's", try sealed([founding], [attacker.recipient, recipients[1]], key: ownKey)))
        // Carol signs the attacker in.
        let byMember = try entry(.add, subject: attacker.recipient, signer: carolIdentity.signing, on: membership.entries)
        attacks.append(("an add signed by a member who is no admin", try sealed(membership.entries + [byMember], recipients + [attacker.recipient])))
        // The attacker signs themselves in.
        let selfSigned = try entry(.add, subject: attacker.recipient, signer: attacker.signing, on: membership.entries)
        attacks.append(("a self-signed add", try sealed(membership.entries + [selfSigned], recipients + [attacker.recipient])))
        // Bob's receiving key replaced by the attacker's in the entry that added him.
        var replaced = membership.entries
        replaced[1].subject = TeamRecipient(signingKey: replaced[1].subject.signingKey, receivingKey: attacker.recipient.receivingKey)
        attacks.append(("a member's key replaced", try sealed(replaced, [recipients[0], replaced[1].subject, recipients[2]])))
        // The last entry (Carol's add) dropped, with her slot.
        attacks.append(("the last entry dropped", try sealed(Array(membership.entries.dropLast()), Array(recipients.dropLast()))))

        let before = bob.must(["list"]).stdout
        for (name, file) in attacks {
            try push(team: file.encoded)
            let result = bob.run(["team", "sync"])
            XCTAssertEqual(result.code, 65, "\(name): \(result.stderr)")
            XCTAssertEqual(bob.must(["list"]).stdout, before, "\(name): nothing merged")
            XCTAssertEqual(try git(["--git-dir", remote, "update-ref", "refs/heads/main", good]).code, 0)
        }
        bob.must(["team", "sync"])
        // An old list replayed: after a real change, the remote is reset to the earlier list.
        let old = try gitBytes(["--git-dir", remote, "show", "main:team.coffer"])
        alice.must(["team", "admin", "ops", "bob"])
        bob.must(["team", "sync"])
        try push(team: old)
        let replayed = bob.run(["team", "sync"])
        XCTAssertEqual(replayed.code, 65, replayed.stderr)
        XCTAssertTrue(replayed.stderr.contains("rolled back"), replayed.stderr)
        XCTAssertEqual(bob.fill("github.com"), "d3ploy")
        XCTAssertFalse(try gitBytes(["--git-dir", remote, "cat-file", "--batch-all-objects", "--batch"]).contains(Array("mallory".utf8)))
    }

    /// Replaces the remote's `team.coffer` with `team`, as someone who can push would.
    private func push(team: [UInt8]) throws {
        let work = root + "/attacker-\(UUID().uuidString.prefix(8))"
        XCTAssertEqual(try git(["clone", "-q", remote, work]).code, 0)
        try Data(team).write(to: URL(fileURLWithPath: work + "/team.coffer"))
        let committed = try git(["-C", work, "commit", "-qam", "coffer: 1 change"])
        XCTAssertEqual(committed.code, 0, committed.stdout + committed.stderr)
        XCTAssertEqual(try git(["-C", work, "push", "-q", "--force", "origin", "HEAD:main"]).code, 0)
    }

}

import Foundation
import XCTest

/// `coffer secret-service` on a private session bus, driven by the real clients: libsecret's
/// `secret-tool`, Python's secretstorage (both session algorithms) and keyring, raw jeepney calls
/// for hostile input, and gnome-keyring as the source of a migration (SPEC.md §17). The bus is
/// started with a configuration of its own, so nothing installed on the machine (gnome-keyring's
/// activation file) answers in Coffer's place.
final class SecretServiceTests: XCTestCase {
    static var products: String { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path }
    static let helpers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().path
    static let pinentry = helpers + "/Helpers/scripted-pinentry"
    static let clients = helpers + "/SecretService/clients.py"
    let master = "keyring test master"
    var home = ""
    var environment: [String: String] = [:]
    var bus: Process?
    var service: Process?
    var serviceLog: String { (try? String(contentsOfFile: home + "/service.log", encoding: .utf8)) ?? "" }
    var pinentryLog: String { (try? String(contentsOfFile: home + "/pinentry.log", encoding: .utf8)) ?? "" }

    override func setUpWithError() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/secret-tool"] {
            try XCTSkipUnless(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing (scripts/test installs it)")
        }
        home = FileManager.default.temporaryDirectory.path + "/coffer-ss-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: home + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: home + "/services", withIntermediateDirectories: true)
        environment = [
            "HOME": home, "XDG_STATE_HOME": home + "/state", "XDG_DATA_HOME": home + "/data", "XDG_RUNTIME_DIR": home + "/run",
            "XDG_CONFIG_HOME": home + "/config", "COFFER_CONTAINER": home + "/vault", "PATH": "/usr/bin:/bin",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home)/run/bus",
            "COFFER_PINENTRY": Self.pinentry, "SCRIPTED_PINENTRY_ANSWERS": home + "/answers", "SCRIPTED_PINENTRY_LOG": home + "/pinentry.log",
        ]
        XCTAssertEqual(try coffer(["init", "--kdf", "interactive", "--password-stdin"], stdin: master + "\n").code, 0)
        try startBus()
    }

    override func tearDown() {
        stopGnomeKeyring()
        for process in [service, bus].compactMap({ $0 }) where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        _ = try? coffer(["lock"])
        try? FileManager.default.removeItem(atPath: home)
    }

    // MARK: Harness

    /// A session bus of our own: no service directory but `services/` (for the activation test).
    func startBus() throws {
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig><type>session</type><listen>unix:path=\(home)/run/bus</listen><servicedir>\(home)/services</servicedir>
            <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
            """
        try config.write(toFile: home + "/bus.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(home)/bus.conf", "--nofork", "--nopidfile"]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        bus = process
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: home + "/run/bus") { usleep(10_000) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: home + "/run/bus"), "the private bus listens")
    }

    func startService(_ extra: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.products + "/coffer")
        process.arguments = ["secret-service"] + extra
        process.environment = environment
        _ = FileManager.default.createFile(atPath: home + "/service.log", contents: nil)
        process.standardError = FileHandle(forWritingAtPath: home + "/service.log")
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        service = process
        for _ in 0..<300 where !serviceLog.contains("serving") && process.isRunning { usleep(10_000) }
        XCTAssertTrue(serviceLog.contains("serving org.freedesktop.secrets"), serviceLog)
    }

    @discardableResult
    func run(_ path: String, _ arguments: [String], stdin: String = "") throws -> RunResult {
        try runProcess("/usr/bin/setsid", ["-w", path] + arguments, stdin: stdin, environment: environment)
    }

    func coffer(_ arguments: [String], stdin: String = "") throws -> RunResult { try run(Self.products + "/coffer", arguments, stdin: stdin) }
    func secretTool(_ arguments: [String], stdin: String = "") throws -> RunResult { try run("/usr/bin/secret-tool", arguments, stdin: stdin) }
    func client(_ arguments: [String]) throws -> RunResult { try run(Self.clients, arguments) }
    func answers(_ lines: String...) throws { try lines.joined(separator: "\n").write(toFile: home + "/answers", atomically: true, encoding: .utf8) }
    func unlock() throws { XCTAssertEqual(try coffer(["unlock", "--password-stdin"], stdin: master + "\n").code, 0) }

    /// The vault's records of kind secret, as `coffer list` prints them (works while locked).
    func secretItems() throws -> [String] {
        try coffer(["list", "--format", "{kind} {name}"]).stdout.split(separator: "\n").filter { $0.hasPrefix("secret ") }.map { String($0.dropFirst(7)) }
    }

    // MARK: Clients

    func testDBusActivationSecretToolStoreLookupSearchClearAndTheItemIsACofferItem() throws {
        // No service running: the bus starts `coffer secret-service` from the activation file.
        try "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=\(Self.products)/coffer secret-service\n"
            .write(toFile: home + "/services/coffer-secret-service.service", atomically: true, encoding: .utf8)
        try unlock()
        let stored = try secretTool(["store", "--label=Example", "service", "example.com", "user", "alice"], stdin: "s3cret")
        XCTAssertEqual(stored.code, 0, stored.stderr)
        let lookup = try secretTool(["lookup", "service", "example.com", "user", "alice"])
        XCTAssertEqual(lookup.stdout, "s3cret", lookup.stderr)
        let search = try secretTool(["search", "service", "example.com"])
        // secret-tool prints the attributes on stderr.
        XCTAssertTrue(search.stdout.contains("label = Example") && search.stderr.contains("attribute.user = alice"), search.stdout + search.stderr)
        XCTAssertEqual(try secretTool(["lookup", "service", "example.com", "user", "bob"]).stdout, "", "another user's lookup finds nothing")

        let shown = try coffer(["show", "Example"])
        XCTAssertTrue(shown.stdout.hasPrefix("s3cret\n"), shown.stdout)
        XCTAssertTrue(shown.stdout.contains("kind: secret") && shown.stdout.contains("secret service: collection login, service=example.com, user=alice"), shown.stdout)
        XCTAssertEqual(try secretItems(), ["Example"])

        XCTAssertEqual(try secretTool(["clear", "service", "example.com"]).code, 0)
        XCTAssertEqual(try secretItems(), [], "clear deletes the item from the vault")
    }

    func testSecretStorageWithBothAlgorithmsAndPythonKeyring() throws {
        try startService(["--no-approval"])
        try unlock()
        XCTAssertEqual(try client(["store", "plain", "Plain item", "plain secret", "app=test", "user=p"]).code, 0)
        let stored = try client(["store", "dh", "DH item", "dh secret", "app=test", "user=d"])
        XCTAssertEqual(stored.code, 0, stored.stderr + serviceLog)
        XCTAssertEqual(try client(["read", "dh", "app=test", "user=p"]).stdout, "Plain item\tplain secret\n", "stored plain, read through DH")
        XCTAssertEqual(try client(["read", "plain", "app=test", "user=d"]).stdout, "DH item\tdh secret\n", "stored through DH, read plain")
        XCTAssertEqual(try client(["store", "dh", "DH item 2", "replaced", "app=test", "user=d"]).code, 0)
        XCTAssertEqual(try client(["read", "plain", "app=test", "user=d"]).stdout, "DH item 2\treplaced\n", "CreateItem with replace updates the item")
        let keyring = try client(["keyring", "system-service", "carol", "keyring password"])
        XCTAssertEqual(keyring.stdout, "keyring password\nkeyring.backends.SecretService\n", keyring.stderr)
        XCTAssertEqual(try secretItems().sorted(), ["DH item 2", "Password for 'carol' on 'system-service'", "Plain item"])
    }

    /// Searching, reading labels and the lock state is no use of the unlock session; reading a
    /// secret is (SPEC.md §17): a program that polls the keyring must not keep an idle vault
    /// unlocked.
    func testSearchesDoNotPushBackTheIdleTimeoutReadsDo() throws {
        try startService(["--no-approval"])
        XCTAssertEqual(try coffer(["unlock", "--password-stdin", "--timeout", "1h"], stdin: master + "\n").code, 0)
        XCTAssertEqual(try client(["store", "plain", "Polled", "p0lled", "app=poll"]).code, 0, serviceLog)
        func remaining() throws -> Int {
            let status = try coffer(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            return try XCTUnwrap(object?["secondsRemaining"] as? Int, status.stdout)
        }
        // The last use is kept in whole seconds and `status` prints whole seconds: 2.1 s on, an
        // unused session has at most 3,597 left, one used just now at least 3,598. A service
        // started then takes the key from the session (its start is no use either) and answers.
        service?.terminate()
        service?.waitUntilExit()
        Thread.sleep(forTimeInterval: 2.1)
        try startService(["--no-approval"])
        for _ in 0..<2 { XCTAssertEqual(try client(["search", "app=poll"]).stdout, "unlocked\nPolled\n", serviceLog) }
        XCTAssertLessThanOrEqual(try remaining(), 3597, "a search re-armed the idle timeout")
        XCTAssertEqual(try client(["read", "plain", "app=poll"]).stdout, "Polled\tp0lled\n")
        XCTAssertGreaterThanOrEqual(try remaining(), 3598, "reading a secret is a use")
    }

    func testCreateCollectionAndAliases() throws {
        try startService(["--no-approval"])
        try unlock()
        let made = try client(["collection", "Work Stuff", "work"])
        XCTAssertEqual(made.code, 0, made.stderr + serviceLog)
        let lines = made.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "/org/freedesktop/secrets/collection/work_stuff", made.stdout)
        XCTAssertTrue(lines[1].hasPrefix("/org/freedesktop/secrets/collection/work_stuff/"), made.stdout)
        XCTAssertEqual(lines[2], "/org/freedesktop/secrets/collection/work_stuff", "ReadAlias names it")
        XCTAssertEqual(lines[3], "['Login', 'Work Stuff']")
        XCTAssertTrue(try coffer(["show", "In Work Stuff"]).stdout.contains("secret service: collection work_stuff, made=here"))
    }

    func testRefusesToStartWithoutAVault() throws {
        environment["COFFER_CONTAINER"] = home + "/no-vault-here"
        let refused = try run("/usr/bin/timeout", ["20", Self.products + "/coffer", "secret-service"])
        XCTAssertEqual(refused.code, 66)
        XCTAssertTrue(refused.stderr.contains("no vault in") && refused.stderr.contains("coffer init"), refused.stderr)
    }

    func testTwoClientsAtOnce() throws {
        try startService(["--no-approval"])
        try unlock()
        let writers = (0..<2).map { number -> Process in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.clients)
            process.arguments = ["store", number == 0 ? "dh" : "plain", "Item \(number)", "secret \(number)", "writer=\(number)"]
            process.environment = environment
            process.standardOutput = FileHandle.nullDevice
            return process
        }
        for writer in writers { try writer.run() }
        for writer in writers { writer.waitUntilExit(); XCTAssertEqual(writer.terminationStatus, 0) }
        for number in 0..<2 {
            XCTAssertEqual(try client(["read", "dh", "writer=\(number)"]).stdout, "Item \(number)\tsecret \(number)\n")
        }
    }

    // MARK: Locked means locked

    func testLockedSearchesButReadsOnlyAfterThePinentryPrompt() throws {
        try startService(["--no-approval"])
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Mail", "service", "imap.example.com"], stdin: "mail secret").code, 0)
        XCTAssertEqual(try coffer(["lock"]).code, 0)

        let locked = try client(["read", "dh", "service=imap.example.com"])
        XCTAssertNotEqual(locked.code, 0, "a read while locked is refused")
        XCTAssertFalse(locked.stdout.contains("mail secret"))
        let search = try secretTool(["search", "service", "imap.example.com"])
        XCTAssertTrue(search.stdout.contains("label = Mail") && !search.stdout.contains("mail secret"), "found while locked, by digest: " + search.stdout)

        try answers("CANCEL")
        let cancelled = try secretTool(["lookup", "service", "imap.example.com"])
        XCTAssertEqual(cancelled.stdout, "", "cancelled at pinentry: nothing released")
        XCTAssertTrue(pinentryLog.contains("GETPIN"), pinentryLog)

        try answers("wrong", master)
        let lookup = try secretTool(["lookup", "service", "imap.example.com"])
        XCTAssertEqual(lookup.stdout, "mail secret", lookup.stderr + serviceLog)
        XCTAssertTrue(pinentryLog.contains("SETERROR"), "a wrong password is asked again")
        XCTAssertFalse(pinentryLog.contains(master), "the pinentry log never sees the password")
        XCTAssertTrue(try coffer(["status"]).stdout.contains("unlocked"), "the prompt starts a session, as coffer unlock does")
    }

    func testCoffersLockLocksTheCollectionsAndSaysSo() throws {
        // Unlocked before the service starts: its first look (at start) finds the vault unlocked,
        // so the lock below is a change it sees. Unlocked after, an unlock and a lock within one
        // of its looks (every second) would be no change at all.
        try unlock()
        try startService(["--no-approval"])
        let listener = Process()
        listener.executableURL = URL(fileURLWithPath: Self.clients)
        // Until both signals came (a generous deadline: a loaded machine took over 4 s to lock).
        listener.arguments = ["signals", "60", "PropertiesChanged", "/org/freedesktop/secrets/collection/login",
                              "CollectionChanged", "/org/freedesktop/secrets"]
        listener.environment = environment
        let output = Pipe()
        listener.standardOutput = output
        try listener.run()
        // Lock only once the listener's match rule is in place: its Python start alone can take
        // longer than any fixed pause on a busy machine, and a signal sent before it is lost.
        var seen = ""
        while !seen.contains("listening\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        listener.waitUntilExit()
        seen += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(seen.contains("PropertiesChanged /org/freedesktop/secrets/collection/login"), seen)
        XCTAssertTrue(seen.contains("CollectionChanged /org/freedesktop/secrets"), seen)
    }

    func testCreateItemWhileLockedPromptsInsteadOfDropping() throws {
        try startService(["--no-approval"])
        // CreateItem itself while locked answers a prompt (libsecret would unlock first).
        try answers("CANCEL")
        XCTAssertEqual(try client(["create", "Dropped", "x", "k=v"]).stdout, "prompt dismissed\n")
        XCTAssertEqual(try secretItems(), [], "cancelled: nothing stored, nothing half")
        try answers(master)
        let created = try client(["create", "Kept", "kept secret", "k=v"])
        XCTAssertTrue(created.stdout.hasPrefix("/org/freedesktop/secrets/collection/login/"), created.stdout + created.stderr + serviceLog)
        XCTAssertEqual(try secretItems(), ["Kept"], "stored once the person unlocked")
        XCTAssertEqual(try secretTool(["lookup", "k", "v"]).stdout, "kept secret")
        // secret-tool's store while locked: libsecret unlocks through the prompt, then stores.
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        try answers("CANCEL")
        _ = try secretTool(["store", "--label=Also dropped", "k2", "v"], stdin: "x")
        XCTAssertEqual(try secretItems(), ["Kept"])
        try answers(master)
        XCTAssertEqual(try secretTool(["store", "--label=Also kept", "k2", "v"], stdin: "y").code, 0)
        XCTAssertEqual(try secretItems().sorted(), ["Also kept", "Kept"])
    }

    // MARK: Approval per application

    func testAProgramReadingAnothersSecretIsAskedAlwaysOnceOrDeny() throws {
        try startService()
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Token", "app", "approval"], stdin: "token").code, 0)
        XCTAssertEqual(try secretTool(["lookup", "app", "approval"]).stdout, "token", "the program that stored it reads it unasked")
        XCTAssertFalse(pinentryLog.contains("CONFIRM"))

        try answers("CANCEL")
        let denied = try client(["read", "dh", "app=approval"])
        XCTAssertEqual(denied.code, 3)
        XCTAssertTrue(denied.stderr.contains("AccessDenied") || denied.stderr.contains("not allowed"), denied.stderr)
        XCTAssertTrue(pinentryLog.contains("SETDESC") && pinentryLog.contains("python3"), "the executable is named: " + pinentryLog)

        try answers("NOTOK")
        XCTAssertEqual(try client(["read", "dh", "app=approval"]).stdout, "Token\ttoken\n", "allowed once")
        XCTAssertEqual(try coffer(["secret-service", "clients"]).stdout, "", "once is not remembered")

        try answers("OK")
        XCTAssertEqual(try client(["read", "dh", "app=approval"]).stdout, "Token\ttoken\n")
        let python = try coffer(["secret-service", "clients"]).stdout
        XCTAssertTrue(python.hasPrefix("/usr/bin/python3"), "always: remembered by executable: " + python)
        let confirmations = pinentryLog.components(separatedBy: "CONFIRM").count
        XCTAssertEqual(try client(["read", "plain", "app=approval"]).stdout, "Token\ttoken\n")
        XCTAssertEqual(pinentryLog.components(separatedBy: "CONFIRM").count, confirmations, "not asked again")
        XCTAssertTrue(try coffer(["show", "Secret Service clients"]).stdout.contains(python.trimmingCharacters(in: .newlines)), "an item the person can see")

        XCTAssertEqual(try coffer(["secret-service", "clients", "--revoke", python.trimmingCharacters(in: .newlines)]).code, 0)
        try answers("CANCEL")
        XCTAssertEqual(try client(["read", "dh", "app=approval"]).code, 3, "revoked: asked again, and denied")
    }

    // MARK: Bad input

    func testHostileClientsGetTheSpecificationsErrorsAndTheServiceKeepsServing() throws {
        try startService(["--no-approval"])
        try unlock()
        let result = try client(["hostile"])
        XCTAssertEqual(result.code, 0, result.stderr + serviceLog)
        let answers = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.stdout)
        let expected = [
            "wrong types": "org.freedesktop.DBus.Error.InvalidArgs", "unknown method": "org.freedesktop.DBus.Error.UnknownMethod",
            "unknown object": "org.freedesktop.DBus.Error.UnknownObject", "unknown item": "org.freedesktop.Secret.Error.NoSuchObject",
            "unknown collection": "org.freedesktop.Secret.Error.NoSuchObject", "unknown algorithm": "org.freedesktop.DBus.Error.NotSupported",
            "dh zero": "org.freedesktop.DBus.Error.InvalidArgs", "dh one": "org.freedesktop.DBus.Error.InvalidArgs",
            "dh too long": "org.freedesktop.DBus.Error.InvalidArgs", "dh p-1": "org.freedesktop.DBus.Error.InvalidArgs",
            "10 MB secret": "org.freedesktop.DBus.Error.InvalidArgs", "10 MB attribute": "org.freedesktop.DBus.Error.InvalidArgs",
            "100000 attributes": "org.freedesktop.DBus.Error.InvalidArgs", "malformed secret": "org.freedesktop.Secret.Error.NoSession",
            "another connection's session": "org.freedesktop.Secret.Error.NoSession",
            "another connection's prompt": "org.freedesktop.Secret.Error.NoSuchObject",
            "sessions in a loop": "org.freedesktop.DBus.Error.LimitsExceeded",
        ]
        for (name, error) in expected { XCTAssertEqual(answers[name] as? String, error, name) }
        XCTAssertEqual(try secretItems(), [], "nothing stored half")

        // A client that leaves mid-prompt: the prompt's pinentry is cancelled, the service goes on.
        XCTAssertEqual(try coffer(["lock"]).code, 0)
        try self.answers("CANCEL")
        let vanished = try client(["vanish"])
        XCTAssertTrue(vanished.stdout.hasPrefix("/org/freedesktop/secrets/prompt/"), vanished.stdout + vanished.stderr)
        try unlock()
        XCTAssertEqual(try client(["store", "dh", "After", "still here", "k=v"]).code, 0, serviceLog)
        XCTAssertTrue(service?.isRunning == true)
    }

    // MARK: The vault's item everywhere

    func testAnItemStoredOverTheBusSurvivesSyncToASecondDevice() throws {
        try startService(["--no-approval"])
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Synced", "service", "sync.example"], stdin: "synced secret").code, 0)
        let remote = home + "/remote.git"
        XCTAssertEqual(try run("/usr/bin/git", ["init", "-q", "--bare", remote]).code, 0)
        XCTAssertEqual(try coffer(["sync", "remote", remote]).code, 0)
        let synced = try coffer(["sync"])
        XCTAssertEqual(synced.code, 0, synced.stderr)
        let second = home + "/second"
        var device = environment
        device["XDG_STATE_HOME"] = home + "/state2"
        let cloned = try runProcess(Self.products + "/coffer", ["clone", remote, "--password-stdin", "--container", second], stdin: master + "\n",
                                    environment: device)
        XCTAssertEqual(cloned.code, 0, cloned.stderr)
        let shown = try runProcess(Self.products + "/coffer", ["show", "Synced", "--container", second, "--password-stdin"], stdin: master + "\n",
                                   environment: device)
        XCTAssertTrue(shown.stdout.hasPrefix("synced secret\n") && shown.stdout.contains("service=sync.example"), shown.stdout + shown.stderr)
    }

    // MARK: gnome-keyring

    var gnomeKeyringPID: String?

    /// gnome-keyring in the foreground on our bus, its login keyring made and unlocked with the
    /// password it reads from stdin (as a display manager's PAM module hands it over). Started
    /// without this process's descriptors: started by Foundation's `Process` it took 15 s to
    /// take its name, and it held the pipes of whoever started it open.
    func startGnomeKeyring() throws -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon") else { return false }
        try "gnome keyring password".write(toFile: home + "/gnome-password", atomically: true, encoding: .utf8)
        let started = try runProcess(Self.clients, ["gnome-keyring", home + "/gnome-password", home + "/run/keyring"], environment: environment)
        gnomeKeyringPID = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let owned = ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                     "string:org.freedesktop.secrets"]
        for _ in 0..<300 where try !run("/usr/bin/dbus-send", owned).stdout.contains("boolean true") { usleep(20_000) }
        return true
    }

    func stopGnomeKeyring() {
        guard let pid = gnomeKeyringPID, let number = Int32(pid) else { return }
        kill(number, SIGTERM)
        for _ in 0..<200 where kill(number, 0) == 0 { usleep(20_000) }
        gnomeKeyringPID = nil
    }

    func testMigratesAGnomeKeyringAndRefusesToStartBesideIt() throws {
        try XCTSkipUnless(try startGnomeKeyring(), "gnome-keyring is missing (scripts/test installs it)")
        XCTAssertEqual(try secretTool(["store", "--label=From GNOME", "service", "gnome.example", "user", "dave"], stdin: "gnome secret").code, 0)
        XCTAssertEqual(try client(["store", "dh", "Wi-Fi", "wifi passphrase", "setting-name=802-11-wireless-security"]).code, 0)

        // The refusal comes at once; a service that started by mistake is stopped by timeout(1).
        let refused = try run("/usr/bin/timeout", ["20", Self.products + "/coffer", "secret-service"])
        XCTAssertEqual(refused.code, 69)
        XCTAssertTrue(refused.stderr.contains("another Secret Service provider owns org.freedesktop.secrets") && refused.stderr.contains("gnome-keyring-daemon"),
                      refused.stderr)

        try unlock()
        let imported = try coffer(["import", "--from", "secret-service"])
        XCTAssertEqual(imported.code, 0, imported.stderr)
        XCTAssertTrue(imported.stderr.contains("label → name (2)") && imported.stderr.contains("imported 2 items"), imported.stderr)
        XCTAssertEqual(try secretItems().sorted(), ["From GNOME", "Wi-Fi"])
        let again = try coffer(["import", "--from", "secret-service"])
        XCTAssertTrue(again.stderr.contains("imported 0 items"), "a second import skips what is there: " + again.stderr)

        stopGnomeKeyring()
        try startService(["--no-approval"])
        XCTAssertEqual(try secretTool(["lookup", "service", "gnome.example", "user", "dave"]).stdout, "gnome secret", serviceLog)
    }
}

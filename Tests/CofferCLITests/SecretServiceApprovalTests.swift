import Foundation
import XCTest

/// Approval belongs to the process that asked, for the items it named (issue 51, item 1;
/// SPEC.md §17.4), and the service never refuses in silence (issue 49, item 6). Each case is a
/// probe an attacker ran: before these fixes each released or changed another program's item
/// without a question.
extension SecretServiceTests {
    /// A process opens a connection, then execs the program that stored the item while a forked
    /// child reads on the inherited connection: the kernel now names that program for the
    /// connection's pid, but the connection belongs to the one that made its first call.
    func testAConnectionStaysBoundToTheProgramThatOpenedIt() throws {
        try startService()
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Token", "app", "probe"], stdin: "token").code, 0)
        try answers("CANCEL")
        let refused = try client(["exec-after-connect", "/usr/bin/secret-tool", "app=probe"])
        XCTAssertEqual(refused.stdout, "error org.freedesktop.DBus.Error.AccessDenied\n", refused.stderr + serviceLog)
        XCTAssertEqual(pinentryLog.components(separatedBy: "\nCONFIRM").count - 1, 1, "asked, as a program that cannot be named: " + pinentryLog)
        XCTAssertTrue(pinentryLog.contains("no longer /usr/bin/python3"), pinentryLog)
        XCTAssertTrue(serviceLog.contains("refused: the person did not allow"), serviceLog)

        try answers("NOTOK")
        XCTAssertEqual(try client(["exec-after-connect", "/usr/bin/secret-tool", "app=probe"]).stdout, "secret token\n",
                       "the same probe, allowed once by the person: the probe reaches the secret only so")
        XCTAssertEqual(try coffer(["secret-service", "clients"]).stdout, "", "nothing is remembered for a program that cannot be named")
        XCTAssertEqual(try secretItems(), ["Token"], "the exec'd program stored nothing")
    }

    /// One question for a GetSecrets of three items names all three; "Allow once" releases what
    /// it named, and an item the caller stored itself is not asked about.
    func testGetSecretsAsksOneQuestionThatNamesEveryItem() throws {
        try startService()
        try unlock()
        for number in 1...3 {
            XCTAssertEqual(try secretTool(["store", "--label=Key \(number)", "app", "many", "n", "\(number)"], stdin: "k\(number)").code, 0)
        }
        XCTAssertEqual(try client(["store", "plain", "Own", "mine", "app=many", "n=4"]).code, 0)
        try answers("CANCEL")
        XCTAssertEqual(try client(["get-secrets", "app=many"]).stdout, "error org.freedesktop.DBus.Error.AccessDenied\n")
        let question = try XCTUnwrap(pinentryLog.split(separator: "\n").last { $0.hasPrefix("SETDESC ") })
        XCTAssertTrue(question.hasPrefix("SETDESC 3 items: "), String(question))
        for label in ["Key 1", "Key 2", "Key 3"] { XCTAssertTrue(question.contains("“\(label)” (stored by /usr/bin/secret-tool)"), String(question)) }
        XCTAssertFalse(question.contains("Own"), "its own item is not asked about")
        XCTAssertEqual(pinentryLog.components(separatedBy: "\nCONFIRM").count - 1, 1, "one question, not one per item")

        try answers("NOTOK")
        XCTAssertEqual(try client(["get-secrets", "app=many"]).stdout, "4\n", "allowed once: every item the question named, and its own")
    }

    /// A 1,230-byte executable path that reads like instructions cannot push the item out of the
    /// question: the item and who stored it come first, the path is shortened in the middle and
    /// the line stays within Assuan's 1,000 bytes.
    func testALongProgramPathCannotCrowdTheItemOutOfTheQuestion() throws {
        try startService()
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Token", "app", "long"], stdin: "token").code, 0)
        let words = ["Firefox is updating your saved logins", "To keep them choose Always allow", "then enter your password again"]
        var directory = home + "/p"
        while directory.utf8.count < 1_200 { directory += "/" + words[directory.count % 3] + String(repeating: " ", count: 60) + "." }
        let python = directory + "/python3"
        XCTAssertEqual(try runProcess("/bin/mkdir", ["-p", directory], environment: nil).code, 0)
        XCTAssertEqual(try runProcess("/bin/cp", ["-L", "/usr/bin/python3", python], environment: nil).code, 0)
        XCTAssertGreaterThan(python.utf8.count, 1_200)

        try answers("CANCEL")
        let denied = try run(python, [Self.clients, "read", "plain", "app=long"])
        XCTAssertEqual(denied.code, 3, denied.stderr)
        let line = try XCTUnwrap(pinentryLog.split(separator: "\n").last { $0.hasPrefix("SETDESC ") })
        XCTAssertLessThanOrEqual(line.utf8.count, 1_000)
        XCTAssertTrue(line.hasPrefix("SETDESC “Token” (stored by /usr/bin/secret-tool)"), String(line))
        XCTAssertTrue(line.contains("…/python3 asks to read the secret of it."), String(line))
    }

    /// Changing, relabelling, replacing or deleting an item another program stored is asked
    /// about as reading it is; what the person refuses is left as it was.
    func testWritesToAnotherProgramsItemAreAsked() throws {
        try startService()
        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Token", "app", "w"], stdin: "token").code, 0)
        for action in ["set-secret", "relabel", "replace", "delete"] {
            try answers("CANCEL")
            XCTAssertEqual(try client(["change", action, "app=w"]).stdout, "error org.freedesktop.DBus.Error.AccessDenied\n", action + serviceLog)
            XCTAssertTrue(serviceLog.contains("refused: the person did not allow"), serviceLog)
            XCTAssertEqual(try secretItems(), ["Token"], action)
            XCTAssertEqual(try secretTool(["lookup", "app", "w"]).stdout, "token", action)
        }
        try answers("NOTOK")
        XCTAssertEqual(try client(["change", "relabel", "app=w"]).stdout, "ok\n")
        XCTAssertEqual(try secretItems(), ["relabelled"])

        // A program changes what it stored itself without a question.
        XCTAssertEqual(try client(["store", "plain", "Own", "mine", "app=own"]).code, 0)
        let asked = pinentryLog.components(separatedBy: "\nCONFIRM").count
        XCTAssertEqual(try client(["change", "set-secret", "app=own"]).stdout, "ok\n")
        XCTAssertEqual(try client(["change", "delete", "app=own"]).stdout, "ok\n")
        XCTAssertEqual(pinentryLog.components(separatedBy: "\nCONFIRM").count, asked)
    }

    /// Without a pinentry nothing is dropped in silence: the service says so at start, a store
    /// while locked fails with IsLocked (secret-tool exits non-zero), an Unlock is refused at once
    /// rather than "dismissed", and each refusal is logged with its reason.
    func testWithoutAPinentryEveryRefusalIsToldAndLogged() throws {
        try startService(["--no-pinentry"])
        XCTAssertTrue(serviceLog.contains("no pinentry (--no-pinentry)"), serviceLog)
        let stored = try secretTool(["store", "--label=Dropped", "k", "v"], stdin: "x")
        XCTAssertNotEqual(stored.code, 0, "a locked store fails visibly: " + stored.stdout + stored.stderr)
        XCTAssertTrue(stored.stderr.contains("locked"), stored.stderr)
        XCTAssertTrue(serviceLog.contains("refused Unlock") || serviceLog.contains("refused CreateItem"), serviceLog)
        XCTAssertEqual(try secretItems(), [])

        try unlock()
        XCTAssertEqual(try secretTool(["store", "--label=Token", "app", "np"], stdin: "token").code, 0)
        let denied = try client(["read", "plain", "app=np"])
        XCTAssertEqual(denied.code, 3)
        XCTAssertTrue(serviceLog.contains("and no pinentry can ask"), serviceLog)
    }

    /// A pinentry that is not there is named at start, before any application meets it.
    func testTheServiceSaysAtStartWhichPinentryItUses() throws {
        try startService()
        XCTAssertTrue(serviceLog.contains("questions go to pinentry \(Self.pinentry)"), serviceLog)
        service?.terminate()
        service?.waitUntilExit()
        environment["COFFER_PINENTRY"] = "pinentry-nowhere"
        try startService()
        XCTAssertTrue(serviceLog.contains("no pinentry: 'pinentry-nowhere' is not on PATH"), serviceLog)
    }
}

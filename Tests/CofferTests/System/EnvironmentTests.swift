import Coffer
import Glibc
import XCTest

/// `Environment` answers as `getenv` does: names compared byte for byte, first value wins.
final class EnvironmentTests: XCTestCase {
    func testLookupSetAndRemoveCompareNamesByBytes() {
        var environment: Environment = ["HOME": "/home/u", "e\u{301}": "decomposed"]
        XCTAssertEqual(environment["HOME"], "/home/u")
        XCTAssertNil(environment["\u{e9}"], "a precomposed name is another variable")
        XCTAssertNil(environment["HOM"])
        environment["HOME"] = "/elsewhere"
        environment["\u{e9}"] = "precomposed"
        XCTAssertEqual(environment["HOME"], "/elsewhere")
        XCTAssertEqual(environment["e\u{301}"], "decomposed")
        XCTAssertEqual(environment["\u{e9}"], "precomposed")
        environment["HOME"] = nil
        XCTAssertNil(environment["HOME"])
        XCTAssertEqual(environment.variables.count, 2)
    }

    func testTheProcessEnvironmentMatchesGetenv() {
        setenv("COFFER_ENVIRONMENT_TEST", "a=b=c", 1)
        defer { unsetenv("COFFER_ENVIRONMENT_TEST") }
        let process = Environment.process
        XCTAssertEqual(process["COFFER_ENVIRONMENT_TEST"], "a=b=c", "only the first '=' separates")
        XCTAssertEqual(process["PATH"], String(cString: getenv("PATH")))
    }

    func testSettingInTheProcessEnvironmentCopiesItAndLeavesTheProcessAlone() {
        setenv("COFFER_ENVIRONMENT_TEST", "kept", 1)
        defer { unsetenv("COFFER_ENVIRONMENT_TEST") }
        var environment = Environment.process
        environment["COFFER_ENVIRONMENT_OTHER"] = "set"
        environment["COFFER_ENVIRONMENT_TEST"] = nil
        XCTAssertEqual(environment["COFFER_ENVIRONMENT_OTHER"], "set")
        XCTAssertNil(environment["COFFER_ENVIRONMENT_TEST"])
        XCTAssertEqual(environment["PATH"], String(cString: getenv("PATH")), "the rest copied")
        XCTAssertNil(getenv("COFFER_ENVIRONMENT_OTHER"), "the process's own environment is untouched")
        XCTAssertEqual(Environment.process["COFFER_ENVIRONMENT_TEST"], "kept")
        XCTAssertNil(Environment.process["COFFER_ENVIRONMENT_TEST=kept"], "a name with '=' names nothing")
        XCTAssertTrue(Environment.process.variables.contains { $0.name == "COFFER_ENVIRONMENT_TEST" && $0.value == "kept" })
    }
}

import Coffer
import FoundationEssentials
import Glibc
import XCTest

/// The hand-written calendar agrees with glibc's `gmtime_r` / `timegm` and refuses what the
/// format does not allow.
final class UTCTimestampTests: XCTestCase {
    func testFormatAndParseAgreeWithGlibcAcrossFourHundredYears() throws {
        // A sample every 31 days and 7,919 seconds, plus the day boundary around it, from 1601 to 2400: leap years,
        // century rules and month ends all occur.
        var seconds: Int64 = -11_644_473_600
        while seconds < 13_569_465_600 {
            for probe in [seconds, seconds - seconds % 86_400, seconds - seconds % 86_400 - 1] {
                var time = time_t(probe)
                var parts = tm()
                gmtime_r(&time, &parts)
                let expected = fourDigits(Int(parts.tm_year) + 1900) + "-" + two(parts.tm_mon + 1) + "-" + two(parts.tm_mday)
                    + "T" + two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec) + "Z"
                let date = Date(timeIntervalSince1970: TimeInterval(probe))
                XCTAssertEqual(UTCTimestamp.format(date), expected)
                XCTAssertEqual(UTCTimestamp.parse(expected), date, expected)
            }
            seconds += 31 * 86_400 + 7919
        }
    }

    func testImpossibleDatesAndOtherSpellingsAreRefused() {
        for text in [
            "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
            "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:61Z", "0000-01-01T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00+00:00",
            "2026-1-01T00:00:00Z", "２026-01-01T00:00:00Z",
        ] {
            XCTAssertNil(UTCTimestamp.parse(text), text)
        }
        XCTAssertNotNil(UTCTimestamp.parse("2000-02-29T12:00:00Z"))
        XCTAssertEqual(UTCTimestamp.parse("2016-12-31T23:59:60Z"), UTCTimestamp.parse("2017-01-01T00:00:00Z"))
        XCTAssertEqual(UTCTimestamp.format(Date(timeIntervalSince1970: -1)), "1969-12-31T23:59:59Z")
        XCTAssertEqual(UTCTimestamp.format(Date(timeIntervalSince1970: 0.9)), "1970-01-01T00:00:00Z")
    }

    private func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private func fourDigits(_ year: Int) -> String {
        let digits = String(year)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

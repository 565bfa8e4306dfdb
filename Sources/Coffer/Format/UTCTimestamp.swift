import FoundationEssentials
import Glibc

/// `YYYY-MM-DDTHH:MM:SSZ`, the one date spelling of SPEC.md §5.2, by hand: Foundation's ISO 8601
/// support loads the time-zone database, which costs more than the rest of a fill.
public enum UTCTimestamp {
    public static func format(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // Years are always four digits (0226, not 226): the fuzzer found that a short year did
        // not survive a round trip.
        let year = String(parts.tm_year + 1900)
        return "\(String(repeating: "0", count: max(0, 4 - year.count)) + year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int32(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let time = timegm(&parts)
        // timegm normalises 31 February into March: refuse dates that are not what they say.
        guard parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(time))
    }
}

import CofferModel
import CofferSupport
import FoundationEssentials

/// `YYYY-MM-DDTHH:MM:SSZ`, the one date spelling of SPEC.md §6.2, by hand: Foundation's ISO 8601
/// support loads the time-zone database, which costs more than the rest of a fill, and so does
/// glibc's `timegm` (it reads `/etc/localtime`). The calendar arithmetic is Howard Hinnant's
/// `days_from_civil` / `civil_from_days` (proleptic Gregorian, exact for every `Int64` day).
public enum UTCTimestamp {
    public static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let (days, secondOfDay) = seconds.floorDivided(by: 86_400)
        let (year, month, day) = civil(fromDays: days)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // Years are always four digits (0226, not 226): the fuzzer found that a short year did
        // not survive a round trip.
        let yearText = String(year)
        return "\(String(repeating: "0", count: max(0, 4 - yearText.count)) + yearText)-\(two(month))-\(two(day))"
            + "T\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))Z"
    }

    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
            }
            return value
        }
        // A leap second (:60) is accepted and, as in POSIX time, counts as the next second.
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 61
        else { return nil }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year  // years start in March: the leap day is last
        let era = shiftedYear.floorDivided(by: 400).quotient
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let (era, dayOfEra) = (days + 719_468).floorDivided(by: 146_097)
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int64 {
    /// Division rounding towards negative infinity, with a remainder in `0..<divisor`.
    fileprivate func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = self / divisor - (self % divisor < 0 ? 1 : 0)
        return (quotient, self - quotient * divisor)
    }
}

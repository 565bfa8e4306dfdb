/// The line protocol pinentry speaks (Assuan, as used by gpg-agent and rbw): commands one per
/// line, answers `OK`, `ERR code text`, `D data`, `S status`, `# comment`, `INQUIRE keyword`.
/// Pure: bytes in, values out; `PinentryInteraction` does the I/O.
///
/// Data lines and command parameters are percent-escaped: `%`, CR and LF (and here every
/// other control character) as `%XX`. A line is at most 1,000 bytes.
import CofferProvider
public enum Assuan {
    /// The longest line either side may send (Assuan's `ASSUAN_LINELENGTH`).
    public static let maximumLineLength = 1000
    /// gpg-error's "Operation cancelled" (GPG_ERR_CANCELED in source pinentry): the user
    /// pressed Cancel or closed the dialog.
    static let cancelledCode = 83_886_179
    /// "Timeout" (GPG_ERR_TIMEOUT from source pinentry).
    static let timeoutCode = 83_886_142
    /// "Not confirmed" (GPG_ERR_NOT_CONFIRMED, 114, from source pinentry): `CONFIRM` declined.
    static let notConfirmedCode = 83_886_194

    public enum Reply: Equatable {
        case ok
        /// The data of a `D` line, unescaped. (The caller wipes it: it may be the PIN.)
        case data([UInt8])
        case error(code: Int, message: String)
        /// `S`, `#` and other lines that carry nothing for the caller.
        case other
        /// `INQUIRE`: pinentry asks for something; Coffer answers `CAN`.
        case inquire
    }

    /// One command line (without the newline): `COMMAND` or `COMMAND escaped-parameter`. A
    /// parameter too long for one line is cut at a character — never inside an escape or a
    /// UTF-8 sequence — and ends in "…": callers put what matters first.
    public static func command(_ name: String, _ parameter: String? = nil) -> [UInt8] {
        guard let parameter else { return Array(name.utf8) }
        let head = Array(name.utf8) + [UInt8(ascii: " ")]
        let whole = escape(Array(parameter.utf8))
        guard head.count + whole.count > maximumLineLength else { return head + whole }
        let ellipsis = Array("…".utf8)
        var kept: [UInt8] = []
        for character in parameter {
            let escaped = escape(Array(String(character).utf8))
            guard head.count + kept.count + escaped.count + ellipsis.count <= maximumLineLength else { break }
            kept += escaped
        }
        return head + kept + ellipsis
    }

    /// `%`, and every byte below 0x20, as `%XX` (uppercase hex).
    static func escape(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        for byte in bytes {
            if byte == UInt8(ascii: "%") || byte < 0x20 {
                escaped += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            } else {
                escaped.append(byte)
            }
        }
        return escaped
    }

    /// Parses one reply line (without its newline).
    /// - Throws: `AssuanError.malformed` for a line no Assuan server sends (or a bad escape).
    public static func parse(_ line: ArraySlice<UInt8>) throws(AssuanError) -> Reply {
        guard line.count <= maximumLineLength else { throw .malformed("line longer than \(maximumLineLength) bytes") }
        func word(_ text: String) -> Bool {
            line.starts(with: text.utf8) && (line.count == text.utf8.count || line[line.startIndex + text.utf8.count] == UInt8(ascii: " "))
        }
        if word("OK") { return .ok }
        if word("D") { return .data(try unescape(line.dropFirst(2))) }
        if word("ERR") {
            let rest = String(decoding: line.dropFirst(4), as: UTF8.self)
            let parts = rest.split(separator: " ", maxSplits: 1)
            guard let code = parts.first.flatMap({ Int($0) }) else { throw .malformed("ERR without a code") }
            return .error(code: code, message: parts.count > 1 ? String(parts[1]) : "")
        }
        if word("INQUIRE") { return .inquire }
        if word("S") || word("#") || line.isEmpty { return .other }
        throw .malformed("unknown reply")
    }

    /// Undoes the percent escapes of a data line.
    static func unescape(_ bytes: ArraySlice<UInt8>) throws(AssuanError) -> [UInt8] {
        guard let result = PercentEncoding.decodeBytes(bytes) else { throw .malformed("a bad %-escape") }
        return result
    }
}

/// Why a conversation with pinentry failed (never containing what was typed).
public enum AssuanError: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed(String)
    /// The program could not be started, or ended before answering.
    case unavailable(String)
    /// pinentry answered a command with an error other than cancel.
    case refused(code: Int, message: String)

    public var description: String {
        switch self {
        case .malformed(let reason): "pinentry spoke something that is not Assuan: \(reason)"
        case .unavailable(let reason): "pinentry is not available: \(reason)"
        case .refused(let code, let message): "pinentry refused (\(code)): \(message)"
        }
    }
}

import Coffer
import CofferTerminalKit
import CQRencode

/// Draws text as a QR code on the terminal with UTF-8 half blocks — two modules per character
/// cell, as `qrencode -t UTF8` draws for `pass show --qrcode` and `gopass show --qr` — in explicit
/// black on white, so it scans on dark and light terminal themes alike.
enum QRCodeOutput {
    typealias Encode = @convention(c) (UnsafePointer<CChar>?, Int32, QRecLevel) -> UnsafeMutablePointer<QRcode>?
    typealias Free = @convention(c) (UnsafeMutablePointer<QRcode>?) -> Void

    /// The quiet zone around the code, in modules (qrencode's default for terminal output).
    static let margin = 2

    /// Refused unless stdout is a terminal: a QR code of a secret must not land in a file, a
    /// pipe or a scrollback-less log by accident.
    static func draw(_ text: String, context: CommandContext) throws {
        guard context.io.standardOutputIsTerminal else {
            throw CLIError("refusing to draw a QR code of a secret when standard output is not a terminal", code: .usage)
        }
        context.print(try render(text))
    }

    /// The terminal rendering, lines joined by newlines (no trailing newline).
    static func render(_ text: String) throws -> String {
        let modules = try encode(text)
        let size = modules.count + 2 * margin
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - margin, column - margin)
            return modules.indices.contains(r) && modules.indices.contains(c) && modules[r][c]
        }
        var lines: [String] = []
        for row in stride(from: 0, to: size, by: 2) {
            var line = "\u{1B}[30;107m"
            for column in 0..<size {
                switch (dark(row, column), dark(row + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines.joined(separator: "\n")
    }

    /// The modules of `text` (true = dark), through libqrencode at error correction level M.
    static func encode(_ text: String) throws -> [[Bool]] {
        guard text.utf8.count <= 2048 else { throw CLIError("too long for a QR code a phone can read (\(text.utf8.count) bytes)", code: .usage) }
        let library = try LoadedLibrary("libqrencode.so.4", package: "libqrencode4", purpose: "drawing a QR code")
        let encode = try library.function("QRcode_encodeString8bit", as: Encode.self)
        let free = try library.function("QRcode_free", as: Free.self)
        guard let code = text.withCString({ encode($0, 0, QR_ECLEVEL_M) }) else {
            throw CLIError("libqrencode could not encode it (\(Errno.current))", code: .software)
        }
        defer {
            code.pointee.data.update(repeating: 0, count: Int(code.pointee.width * code.pointee.width))  // the modules spell the secret
            free(code)
        }
        let width = Int(code.pointee.width)
        return (0..<width).map { row in (0..<width).map { column in code.pointee.data[row * width + column] & 1 == 1 } }
    }
}

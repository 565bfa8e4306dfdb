import Coffer
import CofferTerminalKit
import FoundationEssentials

struct OTPCommand: Command {
    static let name = "otp"
    static let summary = "print an item's current one-time code"
    static let usage = "otp ENTRY [--clip] [--json] [--qr]"
    static let discussion = """
        ENTRY names the item (see 'coffer help show'). Prints the current TOTP, HOTP or Steam Guard code of the
        item's 'otp' (set with 'coffer add --otp' or 'coffer edit ENTRY --otp'). An HOTP code moves
        the item's counter on. --json prints {"code", "period", "remaining"} (the last two null
        for HOTP). --qr draws the otpauth:// URI as a QR code on the terminal, to scan into a
        phone's authenticator; it is refused when standard output is not a terminal.
        """
    static let examples = ["coffer otp GitLab", "coffer otp GitLab --clip", "coffer otp 3fa1c0… --json | jq -r .code"]
    static let options: [OptionSpec] = [
        .flag("clip", "copy the code to the clipboard instead (cleared after $COFFER_CLIP_TIME, default 45 s)"),
        .flag("json", "print {\"code\", \"period\", \"remaining\"}"),
        .flag("qr", "draw the otpauth:// URI as a QR code on the terminal"),
    ]

    static func run(_ context: CommandContext) throws -> ExitCode {
        let operand = context.scoped(try context.positionals(1...1, names: "ENTRY")[0])
        let vault = try context.unlockedVault()
        let id = try EntryOperand.resolve(operand, in: vault, context: context)
        if context.arguments.has("qr") {
            let record = try vault.record(withID: id)
            guard let otp = record.otp else { throw CLIError("'\(record.title)' has no one-time code", code: .noInput) }
            try QRCodeOutput.draw(otp, context: context)
            return .success
        }
        let code = try currentCode(of: id, in: vault, operand: operand)
        if context.arguments.has("clip") {
            let delay = try Clipboard.copy(code.code, io: context.io)
            let valid = code.remaining.map { ", valid \($0) s more" } ?? ""
            context.note("copied the one-time code to the clipboard\(valid); it is cleared in \(delay) s")
        } else if context.wantsJSON {
            context.print(JSONOutput.render([
                "code": .string(code.code), "period": code.period.map { .integer(Int64($0)) } ?? .null,
                "remaining": code.remaining.map { .integer(Int64($0)) } ?? .null,
            ]))
        } else {
            context.print(code.code)
        }
        return .success
    }

    /// A record without a code has no matching credential (exit 66); one whose code does not
    /// parse is bad data (65).
    private static func currentCode(of id: RecordID, in vault: Vault, operand: String) throws -> OneTimeCode {
        do {
            return try vault.oneTimeCode(forRecordWithID: id)
        } catch {
            let hint = "'coffer edit \(operand.prefix(40)) --otp' sets it"
            switch error {
            case .noOneTimeCode: throw CLIError(error.description, hint: hint, code: .noInput)
            case .invalidInput(let reason): throw CLIError(reason, hint: hint, code: .dataError)
            default: throw error
            }
        }
    }
}

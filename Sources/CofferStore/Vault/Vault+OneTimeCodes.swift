import CofferFormat
import FoundationEssentials

extension Vault {
    /// The current one-time code of record `id` (SPEC.md §6.2 `otp`). A time-based code only
    /// reads the record; an HOTP code moves the record's counter on in the same transaction that
    /// reads it, so two processes never hand out the same code and none is skipped.
    /// - Throws: `.noOneTimeCode` when the record has none; `.invalidInput` when its `otp` does
    ///   not parse.
    public func oneTimeCode(forRecordWithID id: RecordID, at date: Date = Date()) throws(VaultError) -> OneTimeCode {
        let record = try record(withID: id)
        let parameters = try Self.oneTimeCodeParameters(of: record)
        guard parameters.kind == .hotp else { return try Self.mapped { () throws(OneTimeCodeError) in try parameters.code(at: date) } }
        var code: OneTimeCode?
        try updateRecord(withID: id) { record in
            let current = try Self.oneTimeCodeParameters(of: record)  // as it is under the lock
            code = try Self.mapped { () throws(OneTimeCodeError) in try current.hotpCode() }
            record.otp = current.advanced().uri
        }
        guard let code else { throw .noOneTimeCode(item: "") }
        return code
    }

    static func oneTimeCodeParameters(of record: Record) throws(VaultError) -> OneTimeCodeParameters {
        guard let otp = record.otp else { throw .noOneTimeCode(item: record.title) }
        return try mapped { () throws(OneTimeCodeError) in try OneTimeCodeParameters(parsing: otp) }
    }

    private static func mapped<T>(_ body: () throws(OneTimeCodeError) -> T) throws(VaultError) -> T {
        do { return try body() } catch { throw .invalidInput("\(error)") }
    }
}

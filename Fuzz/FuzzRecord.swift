// libFuzzer target: record envelopes and record documents (the JSON inside, as if it had
// decrypted) are rejected or accepted without crashing; accepted documents round-trip, and any
// JSON the reader accepts is written canonically in a form it reads back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let envelope = try? RecordEnvelope.decode(bytes) {
        precondition(envelope.encoded() == bytes)
        if let key = try? SecureBytes(count: 32), let id = try? RecordID(bytes: [UInt8](repeating: 7, count: 16)[...]),
           let vaultID = try? VaultID(bytes: [UInt8](repeating: 9, count: 16)[...]) {
            _ = try? RecordSealing.open(bytes, id: id, vaultID: vaultID, key: key)
        }
    }
    if let value = try? JSONValue.parse(bytes) {
        let canonical = value.canonicalBytes
        precondition((try? JSONValue.parse(canonical)) == value, "canonical JSON does not read back")
        precondition((try? JSONValue.parse(canonical))?.canonicalBytes == canonical, "canonical JSON is not stable")
    }
    if let record = try? RecordCoding.decode(bytes), let again = try? RecordCoding.encode(record) {
        precondition((try? RecordCoding.decode(again)) == record, "a record document does not round-trip")
    }
    return 0
}

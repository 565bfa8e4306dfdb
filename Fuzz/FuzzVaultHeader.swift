// libFuzzer target: any bytes given to the vault header parser are rejected or accepted,
// never crash, and an accepted header re-encodes to the same bytes (canonical form).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVaultHeader(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    for policy in [KDFPolicy.standard, .relaxedForTesting] {
        if let header = try? VaultHeader.decode(bytes, policy: policy) {
            precondition((try? header.encoded()) == bytes, "a decoded header is not canonical")
        }
    }
    return 0
}

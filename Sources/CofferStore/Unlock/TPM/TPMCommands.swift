import CofferCrypto
import CofferSystem

/// The TPM 2.0 commands quick unlock sends (SPEC.md §8.6.1), marshalled as TPM 2.0 Library
/// Part 3 lays them out — big-endian, a size before each sized buffer — each authorized by a
/// password session (`TPM_RS_PW`). No tpm2-tss: see `TPMChannel`.
struct TPMCommands {
    let channel: TPMChannel

    /// A response code, told apart where quick unlock acts on it.
    enum Failure: Error, Equatable {
        case channel(TPMChannel.Failure)
        /// `TPM_RC_AUTH_FAIL` or `TPM_RC_BAD_AUTH`: a wrong PIN (counted by the TPM's dictionary-
        /// attack protection).
        case authorizationFailed
        /// `TPM_RC_LOCKOUT`: the TPM refuses authorizations until its recovery time has passed.
        case lockedOut
        /// `TPM_RC_INTEGRITY` on loading: the object was sealed by another TPM (or this one was
        /// cleared since).
        case foreignObject
        case response(code: UInt32, command: String)
    }

    // MARK: The commands

    /// TPM2_CreatePrimary of SPEC.md §8.6.1's storage key under the owner hierarchy: the same
    /// key every time on this TPM (derived from its owner seed), another on any other TPM.
    func createPrimary() throws(Failure) -> UInt32 {
        var parameters = TPMWriter()
        parameters.sized([0, 0, 0, 0])  // TPM2B_SENSITIVE_CREATE: no userAuth, no data
        parameters.sized(Self.primaryTemplate)
        parameters.sized([])  // outsideInfo
        parameters.u32(0)  // creationPCR: none
        var response = try send(0x131, "CreatePrimary", handles: [Self.ownerHierarchy], authValue: [], parameters: parameters.bytes, returnsHandle: true)
        return try response.u32()
    }

    /// TPM2_Create of a sealed data object (a keyed hash with no scheme) holding `data`, opened
    /// by `authValue` (empty: no PIN). - Returns: its TPM2B_PRIVATE ‖ TPM2B_PUBLIC.
    func createSealedObject(parent: UInt32, data: SecureBytes, authValue: [UInt8]) throws(Failure) -> [UInt8] {
        var parameters = TPMWriter()
        var sensitive = TPMWriter()
        sensitive.sized(authValue)
        data.withUnsafeBytes { sensitive.sized(Array($0)) }
        parameters.sized(sensitive.bytes)
        sensitive.wipe()
        parameters.sized(Self.sealedObjectTemplate)
        parameters.sized([])
        parameters.u32(0)
        defer { parameters.wipe() }
        var response = try send(0x153, "Create", handles: [parent], authValue: [], parameters: parameters.bytes)
        return try response.sized(withSize: true) + response.sized(withSize: true)
    }

    /// TPM2_Load of `object` (TPM2B_PRIVATE ‖ TPM2B_PUBLIC) under `parent`.
    func load(_ object: [UInt8], parent: UInt32) throws(Failure) -> UInt32 {
        var response = try send(0x157, "Load", handles: [parent], authValue: [], parameters: object, returnsHandle: true)
        return try response.u32()
    }

    /// TPM2_Unseal: the data of the loaded object `handle`, authorized by `authValue`.
    func unseal(_ handle: UInt32, authValue: [UInt8]) throws(Failure) -> SecureBytes {
        var response = try send(0x15E, "Unseal", handles: [handle], authValue: authValue, parameters: [])
        defer { response.wipe() }
        var data = try response.sized(withSize: false)
        defer { data.withUnsafeMutableBytes { Sodium.wipe($0) } }
        do { return try SecureBytes(copying: data) } catch { throw .response(code: 0, command: "Unseal") }
    }

    /// TPM2_FlushContext: a transient object is let go (the resource manager would at close; a
    /// software TPM on a socket has none).
    func flush(_ handle: UInt32) {
        var parameters = TPMWriter()
        parameters.u32(handle)
        _ = try? send(0x165, "FlushContext", handles: [], authValue: nil, parameters: parameters.bytes)
    }

    // MARK: Marshalling

    static let ownerHierarchy: UInt32 = 0x4000_0001
    static let passwordSession: UInt32 = 0x4000_0009

    /// TPMT_PUBLIC of the primary key: ECC NIST P-256, SHA-256 names, a restricted decryption key
    /// with AES-128-CFB (the TCG's storage-key template), no policy, an empty unique field.
    static let primaryTemplate: [UInt8] = [
        0x00, 0x23, 0x00, 0x0B, 0x00, 0x03, 0x04, 0x72, 0x00, 0x00,  // ECC, SHA-256, attributes, no policy
        0x00, 0x06, 0x00, 0x80, 0x00, 0x43,  // AES 128 CFB
        0x00, 0x10, 0x00, 0x03, 0x00, 0x10,  // no scheme, NIST P-256, no KDF
        0x00, 0x00, 0x00, 0x00,  // unique: x and y empty
    ]

    /// TPMT_PUBLIC of the sealed object: a keyed-hash data object, SHA-256 names, fixedTPM,
    /// fixedParent and userWithAuth — and not noDA, so every wrong authorization counts toward
    /// the TPM's lockout.
    static let sealedObjectTemplate: [UInt8] = [
        0x00, 0x08, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x52, 0x00, 0x00,  // keyed hash, SHA-256, attributes, no policy
        0x00, 0x10, 0x00, 0x00,  // no scheme; unique empty
    ]

    /// Sends a command, retrying the TPM's "busy" warnings, and returns a reader at its
    /// parameters — after the handle it returns (`returnsHandle`), for the caller to read first.
    private func send(
        _ code: UInt32, _ name: String, handles: [UInt32], authValue: [UInt8]?, parameters: [UInt8], returnsHandle: Bool = false
    ) throws(Failure) -> TPMReader {
        var command = TPMWriter()
        command.u16(authValue == nil ? 0x8001 : 0x8002)  // TPM_ST_NO_SESSIONS, TPM_ST_SESSIONS
        command.u32(0)  // the size, set below
        command.u32(code)
        for handle in handles { command.u32(handle) }
        if let authValue {
            command.u32(UInt32(4 + 2 + 1 + 2 + authValue.count))  // handle, nonce, attributes, hmac
            command.u32(Self.passwordSession)
            command.sized([])  // nonce
            command.bytes.append(0x01)  // continueSession
            command.sized(authValue)
        }
        command.bytes += parameters
        let size = UInt32(command.bytes.count)
        command.bytes.replaceSubrange(2..<6, with: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        defer { command.wipe() }
        for _ in 0..<20 {
            let bytes: [UInt8]
            do { bytes = try channel.transmit(command.bytes) } catch { throw .channel(error) }
            var response = TPMReader(bytes: bytes)
            let tag = try response.u16(), _ = try response.u32(), rc = try response.u32()
            switch rc {
            case 0:
                // The handle area (read by the caller) comes before the parameter size.
                if tag == 0x8002 { response.skipParameterSize(afterHandleBytes: returnsHandle ? 4 : 0) }
                return response
            case 0x922, 0x908, 0x90A:  // TPM_RC_RETRY, TPM_RC_YIELDED, TPM_RC_TESTING
                Pause.sleep(for: .milliseconds(20))
            default:
                throw Self.failure(rc, command: name)
            }
        }
        throw .response(code: 0x922, command: name)
    }

    /// What a response code means here (TPM 2.0 Part 2, §6.6: format-one codes carry the error
    /// in bits 0–5 and the handle, session or parameter it concerns above).
    static func failure(_ code: UInt32, command: String) -> Failure {
        if code == 0x921 { return .lockedOut }
        if code & 0x80 != 0 {
            switch code & 0x3F {
            case 0x0E, 0x22: return .authorizationFailed  // TPM_RC_AUTH_FAIL, TPM_RC_BAD_AUTH
            case 0x1F where command == "Load": return .foreignObject  // TPM_RC_INTEGRITY
            default: break
            }
        }
        return .response(code: code, command: command)
    }
}

/// Big-endian marshalling, TPM 2.0 style.
struct TPMWriter {
    var bytes: [UInt8] = []
    mutating func u16(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    mutating func u32(_ value: UInt32) { bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    /// A TPM2B: its size (u16) and its bytes.
    mutating func sized(_ buffer: [UInt8]) {
        u16(UInt16(buffer.count))
        bytes += buffer
    }
    mutating func wipe() { bytes.withUnsafeMutableBytes { Sodium.wipe($0) } }
}

struct TPMReader {
    var bytes: [UInt8]
    var offset = 0

    mutating func take(_ count: Int) throws(TPMCommands.Failure) -> ArraySlice<UInt8> {
        guard count >= 0, offset + count <= bytes.count else { throw .channel(.broken("a response shorter than its contents")) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }
    mutating func u16() throws(TPMCommands.Failure) -> UInt16 { try take(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws(TPMCommands.Failure) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    /// A TPM2B's bytes, with its size in front when `withSize`.
    mutating func sized(withSize: Bool) throws(TPMCommands.Failure) -> [UInt8] {
        let start = offset
        let count = Int(try u16())
        _ = try take(count)
        return Array(bytes[(withSize ? start : start + 2)..<offset])
    }
    /// Moves past the parameter size that follows the handle area of a response with sessions,
    /// leaving the handles to be read first.
    mutating func skipParameterSize(afterHandleBytes count: Int) {
        guard offset + count + 4 <= bytes.count else { return }
        bytes.removeSubrange(offset + count..<offset + count + 4)
    }
    mutating func wipe() { bytes.withUnsafeMutableBytes { Sodium.wipe($0) } }
}

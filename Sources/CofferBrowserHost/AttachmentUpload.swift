import CofferProvider

/// A file the vault page sends in parts (SPEC.md §13.3): a native message carries at most
/// 1 MiB, so a file over 512 KiB comes as `attachmentPart`s, then one `attachmentAdd` names the
/// upload. The host holds one upload at a time, in memory only: the file is sealed when it is
/// added, never written to a disk before.
struct AttachmentUpload {
    /// The name the first part's answer gave; each later part and the add must carry it.
    let name: String
    var bytes: [UInt8]

    /// As large as `coffer attach` takes by default.
    static let maximumSize = Int(Vault.defaultAttachmentLimit)

    /// Appends a part. When the bytes need more room they move to a buffer twice as large and
    /// the old one is overwritten: no copy of the file is left behind in freed memory.
    mutating func append(_ part: [UInt8]) {
        if bytes.capacity < bytes.count + part.count {
            var grown: [UInt8] = []
            grown.reserveCapacity(max(bytes.count + part.count, bytes.capacity * 2))
            grown += bytes
            Self.erase(&bytes)
            bytes = grown
        }
        bytes += part
    }

    /// Overwrites a file's bytes in place before they are let go (they may be a secret document).
    static func erase(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        bytes = []
    }
}

extension BrowserHost {
    /// `attachmentPart`: a part without `name` starts a new upload (one still pending is let
    /// go); with it, the part follows that upload's. An unknown name is `notFound`: the host
    /// was restarted, or another upload started since.
    func receivePart(_ content: [UInt8], of name: String?) throws -> JSONObject {
        if let name {
            guard upload?.name == name else { throw BrowserHostError.notFound }
        } else {
            if upload != nil { AttachmentUpload.erase(&upload!.bytes) }
            upload = AttachmentUpload(name: Base64.encodeURL(try SecureRandom.bytes(16)), bytes: [])
        }
        guard upload!.bytes.count + content.count <= uploadLimit else {
            AttachmentUpload.erase(&upload!.bytes)
            upload = nil
            throw BrowserHostError.invalid(member: "content", "a file added from the page is at most \(uploadLimit >> 20) MiB")
        }
        upload!.append(content)
        return ["upload": .string(upload!.name), "size": .integer(Int64(upload!.bytes.count))]
    }

    /// What an `attachmentAdd` adds: its own content, or the pending upload it names (taken:
    /// an upload is added once).
    func takeContent(_ source: BrowserRequest.AttachmentContent) throws -> [UInt8] {
        switch source {
        case .inline(let bytes):
            return bytes
        case .upload(let name):
            guard let pending = upload, pending.name == name else { throw BrowserHostError.notFound }
            upload = nil
            return pending.bytes
        }
    }
}

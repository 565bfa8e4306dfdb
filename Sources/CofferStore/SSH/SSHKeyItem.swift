import CofferFormat
/// What makes an item of kind `ssh-key` an SSH key (SPEC.md §6.3): its private key in a hidden
/// field `privateKey` (an unencrypted OpenSSH key file — the record's seal protects it), its
/// public key in a field `publicKey` (an `authorized_keys` line), and a field `confirm` set to
/// `yes` when the agent must ask before each signature. The names are Bitwarden's, so an SSH key
/// imported from a Bitwarden export works as it is; `private key`/`public key` (1Password's
/// titles) are read too.
extension Record {
    /// The `publicKey` field as `ssh-ed25519 AAAA…` (type and key, no comment), or its first two
    /// words for a key type the agent does not serve; `nil` when the item has none.
    public var sshPublicKeyText: String? {
        guard kind == .sshKey, let value = sshField("publickey")?.value else { return nil }
        if let key = SSHPublicKey(authorizedKeysLine: value) { return key.authorizedKeysText }
        let words = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        return words.count >= 2 ? words[0] + " " + words[1] : nil
    }

    /// The OpenSSH private key file of an ssh-key item.
    public var sshPrivateKeyText: String? { kind == .sshKey ? sshField("privatekey")?.value : nil }

    /// Whether the agent asks before each signature with this key.
    public var sshRequiresConfirmation: Bool {
        guard let value = sshField("confirm")?.value.lowercased() else { return false }
        return ["yes", "true", "1", "on"].contains(value)
    }

    /// The first field whose name, lower-cased without spaces, is `folded`.
    private func sshField(_ folded: String) -> RecordField? {
        fields.first { $0.name.lowercased().filter { $0 != " " } == folded }
    }
}

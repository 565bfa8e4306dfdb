/// Sealing a team's vault key to its members and opening one's own copy (SPEC.md §19.3–§19.4).
enum TeamKeys {
    /// The id of `keys`' vault key, as membership entries name it: subkey 6, which reveals
    /// nothing about the key.
    static func keyID(of keys: VaultKeys) throws(CryptoError) -> [UInt8] {
        try keys.subkey(.keyIdentifier).withUnsafeBytes { Array($0) }
    }

    /// Slots for `members` (their order) and the earlier keys sealed under `keys`.
    static func seal(_ keys: VaultKeys, to members: [TeamMembership.Member], teamID: VaultID, nonce: [UInt8]? = nil)
        throws -> (slots: [TeamKeyFile.Slot], earlierCount: Int, sealedEarlier: [UInt8])
    {
        let slots = try members.map { member in
            TeamKeyFile.Slot(
                signingKey: member.recipient.signingKey,
                sealedKey: try SealedBoxKeyPair.seal(keys.vaultKey, to: member.recipient.receivingKey))
        }
        guard !keys.previous.isEmpty else { return (slots, 0, []) }
        var plain = keys.previous.flatMap { $0.vaultKey.withUnsafeBytes { Array($0) } }
        defer { plain.withUnsafeMutableBytes { Sodium.wipe($0) } }
        let nonce = try nonce ?? XChaCha20Poly1305.randomNonce()
        let sealed = try XChaCha20Poly1305.seal(
            plain, key: keys.subkey(.keyHistory), nonce: nonce,
            associatedData: TeamKeyFile.earlierKeysAssociatedData(teamID: teamID, keyID: keyID(of: keys)))
        return (slots, keys.previous.count, nonce + sealed)
    }

    /// Opens this person's copy of the team key, and the earlier keys under it.
    ///
    /// The slots must be exactly the members, in their order; the key opened must be the one
    /// the membership names, and each earlier key one it named before. A slot is anonymous
    /// (anyone can seal to a public key), so this is what stops a planted key.
    static func open(_ file: TeamKeyFile, membership: TeamMembership, identity: PersonalIdentity) throws -> VaultKeys {
        guard file.slots.map(\.signingKey) == membership.members.map(\.recipient.signingKey) else {
            throw TeamError.refused("the sealed keys are not exactly the members' (one added, removed or replaced outside the membership list)")
        }
        guard let mine = file.slots.first(where: { $0.signingKey == identity.signing.publicKey }) else {
            throw TeamError.notMember(team: membership.teamName)
        }
        let key: SecureBytes
        do { key = try identity.receiving.open(mine.sealedKey) } catch {
            throw TeamError.refused("your sealed copy of the team key does not open (replaced or damaged)")
        }
        return try withHistory(VaultKeys(vaultKey: key), file: file, membership: membership)
    }

    /// `current` (the key the membership names) with the earlier keys the file seals under it:
    /// a team unlocked from a keyring session gets its history this way, without the identity.
    static func withHistory(_ current: VaultKeys, file: TeamKeyFile, membership: TeamMembership) throws -> VaultKeys {
        guard try keyID(of: current) == membership.keyID else {
            throw TeamError.refused("the team key is not the key the membership list names")
        }
        guard file.earlierKeyCount == membership.earlierKeyIDs.count else {
            throw TeamError.refused("the team's earlier keys are \(file.earlierKeyCount), the membership list names \(membership.earlierKeyIDs.count)")
        }
        guard file.earlierKeyCount > 0 else { return current }
        let sealed = file.sealedEarlierKeys
        let plain: SecureBytes
        do {
            plain = try XChaCha20Poly1305.open(
                sealed[24...], key: current.subkey(.keyHistory), nonce: sealed[0..<24],
                associatedData: TeamKeyFile.earlierKeysAssociatedData(teamID: file.teamID, keyID: membership.keyID))
        } catch {
            throw TeamError.refused("the team's earlier keys do not open under the current key")
        }
        var earlier: [VaultKeys] = []
        for index in 0..<file.earlierKeyCount {
            let key = try plain.withUnsafeBytes { try SecureBytes(copying: $0[(index * 32)..<(index * 32 + 32)]) }
            earlier.append(try VaultKeys(vaultKey: key))
        }
        // Newest first in the file; the chain lists them oldest first.
        guard try earlier.map({ try keyID(of: $0) }) == membership.earlierKeyIDs.reversed() else {
            throw TeamError.refused("the team's earlier keys are not the ones the membership list named")
        }
        return try VaultKeys(vaultKey: current.vaultKey, previous: earlier)
    }
}

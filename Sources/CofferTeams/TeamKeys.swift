import CofferStore
/// Sealing a team's key and membership, and opening them (SPEC.md §16.3–§16.4).
///
/// Opening judges everything before anything is used: the membership block must open under
/// the key; the chain must verify (from the founder this device pinned); the slots must be
/// exactly the members', in their order; the key must be the one the chain names; each earlier
/// key one it named before. A slot is anonymous (anyone can seal to a public key), so these
/// checks are what stop a planted key.
enum TeamKeys {
    /// The id of `keys`' vault key, as membership entries name it: subkey 6, which reveals
    /// nothing about the key.
    static func keyID(of keys: VaultKeys) throws(CryptoError) -> [UInt8] {
        try keys.subkey(.keyIdentifier).withUnsafeBytes { Array($0) }
    }

    /// `team.coffer` for `membership`, with `keys` sealed to its members and `keys.previous`
    /// kept in the block.
    /// - Parameter notices: the removal notices the file carries (`removalNotices(carrying:)`).
    static func seal(_ keys: VaultKeys, membership: TeamMembership, notices: [TeamKeyFile.Notice] = [], nonce: [UInt8]? = nil) throws -> TeamKeyFile {
        try seal(keys, teamID: membership.teamID, entries: membership.entries, recipients: membership.members.map(\.recipient), notices: notices, nonce: nonce)
    }

    /// The same from its parts, judged by nobody: for test vectors and the tests' forgeries.
    static func seal(
        _ keys: VaultKeys, teamID: VaultID, entries: [MembershipEntry], recipients: [TeamRecipient], notices: [TeamKeyFile.Notice] = [],
        nonce: [UInt8]? = nil
    ) throws -> TeamKeyFile {
        let slots = try recipients.map { recipient in
            TeamKeyFile.Slot(
                slotID: TeamKeyFile.slotID(of: recipient.signingKey, teamID: teamID),
                sealedKey: try SealedBoxKeyPair.seal(keys.vaultKey, to: recipient.receivingKey))
        }
        var plain = MembershipBlock(entries: entries, earlierKeys: keys.previous.map(\.vaultKey)).encoded
        defer { plain.withUnsafeMutableBytes { Sodium.wipe($0) } }
        let nonce = try nonce ?? XChaCha20Poly1305.randomNonce()
        let file = TeamKeyFile(teamID: teamID, slots: slots, notices: notices, sealedMembership: [])
        let sealed = try XChaCha20Poly1305.seal(
            plain, key: keys.subkey(.membershipKey), nonce: nonce, associatedData: TeamKeyFile.associatedData(teamID: teamID, version: file.version))
        return TeamKeyFile(teamID: teamID, slots: slots, notices: notices, sealedMembership: nonce + sealed)
    }

    // MARK: Removal notices (SPEC.md §16.3)

    /// `file`'s notices with one more for `entry` (a removal) sealed to its subject, the oldest
    /// dropped past `TeamKeyFile.maximumNotices`.
    static func notices(_ existing: [TeamKeyFile.Notice], adding entry: MembershipEntry, teamID: VaultID) throws -> [TeamKeyFile.Notice] {
        let sealed = try SealedBoxKeyPair.seal(SecureBytes(copying: entry.encoded), to: entry.subject.receivingKey)
        let notice = TeamKeyFile.Notice(slotID: TeamKeyFile.slotID(of: entry.subject.signingKey, teamID: teamID), sealedEntry: sealed)
        return Array((existing.filter { $0.slotID != notice.slotID } + [notice]).suffix(TeamKeyFile.maximumNotices))
    }

    /// The removal that `file` tells `identity` of: the remove entry sealed to them, checked to
    /// be an entry that removes exactly them, signed for this team. `nil` when there is none (or
    /// it does not hold): a missing slot is then all that is known.
    static func removalNotice(in file: TeamKeyFile, for identity: PersonalIdentity) -> MembershipEntry? {
        let slot = TeamKeyFile.slotID(of: identity.signing.publicKey, teamID: file.teamID)
        guard let notice = file.notices.last(where: { $0.slotID == slot }),
              let plain = try? identity.receiving.open(notice.sealedEntry),
              let entry = try? plain.withUnsafeBytes({ try MembershipEntry.decode(ArraySlice($0.bindMemory(to: UInt8.self))) }),
              entry.action == .remove, entry.subject == identity.recipient, entry.hasValidSignature(teamID: file.teamID)
        else { return nil }
        return entry
    }

    /// Opens the file with this person's slot.
    /// - Throws: `TeamError.notMember` when it has no slot for them.
    static func open(_ file: TeamKeyFile, identity: PersonalIdentity, founder: [UInt8]?) throws -> (TeamMembership, VaultKeys) {
        let id = TeamKeyFile.slotID(of: identity.signing.publicKey, teamID: file.teamID)
        guard let mine = file.slots.first(where: { $0.slotID == id }) else { throw TeamError.notMember(team: "") }
        let key: SecureBytes
        do { key = try identity.receiving.open(mine.sealedKey) } catch {
            throw TeamError.refused("your sealed copy of the team key does not open (replaced or damaged)")
        }
        return try open(file, key: VaultKeys(vaultKey: key), founder: founder)
    }

    /// Opens the file with a team key held already (a keyring session, this device's unlock).
    static func open(_ file: TeamKeyFile, key current: VaultKeys, founder: [UInt8]?) throws -> (TeamMembership, VaultKeys) {
        guard let block = try block(of: file, key: current) else {
            throw TeamError.refused("the membership list does not open under the team key")
        }
        return try judge(file, block, key: current, founder: founder)
    }

    /// The membership block, if it opens under `key`'s membership key; `nil` if it does not.
    static func block(of file: TeamKeyFile, key: VaultKeys) throws -> MembershipBlock? {
        let sealed = file.sealedMembership
        guard sealed.count >= 24, let plain = try? XChaCha20Poly1305.open(
            sealed[24...], key: key.subkey(.membershipKey), nonce: sealed[0..<24],
            associatedData: TeamKeyFile.associatedData(teamID: file.teamID, version: file.version))
        else { return nil }
        return try plain.withUnsafeBytes { (bytes) throws -> MembershipBlock in
            do { return try MembershipBlock.decode(bytes) } catch { throw TeamError.refused("the membership list is malformed (\(error))") }
        }
    }

    /// Judges an opened block: the chain, the slots, the key it names, the earlier keys.
    static func judge(_ file: TeamKeyFile, _ block: MembershipBlock, key current: VaultKeys, founder: [UInt8]?) throws -> (TeamMembership, VaultKeys) {
        let membership = try TeamMembership(entries: block.entries, teamID: file.teamID, founder: founder)
        guard file.slots.map(\.slotID) == membership.members.map({ TeamKeyFile.slotID(of: $0.recipient.signingKey, teamID: file.teamID) }) else {
            throw TeamError.refused("the sealed keys are not exactly the members' (one added, removed or replaced outside the membership list)")
        }
        guard try keyID(of: current) == membership.keyID else {
            throw TeamError.refused("the team key is not the key the membership list names")
        }
        let earlier = try block.earlierKeys.map { try VaultKeys(vaultKey: $0) }
        // Newest first in the block; the chain names them oldest first.
        guard try earlier.map({ try keyID(of: $0) }) == membership.earlierKeyIDs.reversed() else {
            throw TeamError.refused("the team's earlier keys are not the ones the membership list named")
        }
        return (membership, try VaultKeys(vaultKey: current.vaultKey, previous: earlier))
    }
}

#!/usr/bin/env python3
"""An independent reader and writer of Coffer's team vaults (SPEC.md §16), from the spec alone:
identities, recipient strings and fingerprints, membership entries and their verification,
and team.coffer. PyNaCl and hashlib only. Run it to write Tests/CofferTests/Vectors/team/."""
import base64
import hashlib
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(__file__))
import coffer_reference as ref  # noqa: E402
from nacl import bindings as sodium  # noqa: E402

SIGNING_CONTEXT = b"COFFER team v1"
SLOT_CONTEXT = b"COFFER team slot"
FOUND, ADD, REMOVE, ROLE = 1, 2, 3, 4
TEAM_KEYS = ord("K")


class Refused(Exception):
    pass


class Identity:
    """§16.1: subkeys 3 and 4 of the personal vault key seed an Ed25519 and an X25519 pair."""

    def __init__(self, personal_key):
        self.sign_pk, self.sign_sk = sodium.crypto_sign_seed_keypair(ref.kdf_subkey(personal_key, 3))
        self.box_pk, self.box_sk = sodium.crypto_box_seed_keypair(ref.kdf_subkey(personal_key, 4))

    def digest(self):
        return hashlib.blake2b(self.sign_pk + self.box_pk, digest_size=32).digest()

    def recipient(self):
        raw = self.sign_pk + self.box_pk + self.digest()[:4]
        return "coffer1" + base64.b32encode(raw).decode().lower().rstrip("=")

    def fingerprint(self):
        d = self.digest()
        return " ".join("%05d" % (int.from_bytes(d[5 * g:5 * g + 5], "big") % 100000) for g in range(6))


def parse_recipient(text):
    if not text.startswith("coffer1"):
        raise Refused("prefix")
    letters = text[len("coffer1"):]
    raw = base64.b32decode(letters.upper() + "=" * (-len(letters) % 8))
    if len(raw) != 68 or base64.b32encode(raw).decode().lower().rstrip("=") != letters:
        raise Refused("spelling")
    if hashlib.blake2b(raw[:64], digest_size=32).digest()[:4] != raw[64:]:
        raise Refused("checksum")
    return raw[:32], raw[32:64]


def key_id(team_key):
    return ref.kdf_subkey(team_key, 6)


def entry(team_id, action, admin, sequence, time, previous, subject, kid, signer, name, team_name=b""):
    """§16.2: the entry's bytes, signed by `signer` (an Identity)."""
    body = bytes([action, admin]) + struct.pack("<QQ", sequence, time) + previous
    body += subject[0] + subject[1] + kid + signer.sign_pk
    body += bytes([len(name)]) + name + bytes([len(team_name)]) + team_name
    signature = sodium.crypto_sign(SIGNING_CONTEXT + team_id + body, signer.sign_sk)[:64]
    return body + signature


def entry_hash(data):
    return hashlib.blake2b(data, digest_size=32).digest()


def parse_entry(data):
    if len(data) < 245 or len(data) > 372:  # a name of 1…64 bytes, a team name of 0…64
        raise Refused("length")
    if data[0] not in (FOUND, ADD, REMOVE, ROLE) or data[1] > 1:
        raise Refused("action or role")
    offset = 178
    texts = []
    for allow_empty in (False, True):
        length = data[offset]
        text = data[offset + 1:offset + 1 + length]
        if length > 64 or (length == 0 and not allow_empty) or len(text) != length:
            raise Refused("text length")
        decoded = text.decode("utf-8")
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in decoded):
            raise Refused("text")
        texts.append(text)
        offset += 1 + length
    if len(data) - offset != 64:
        raise Refused("length")
    sequence, time = struct.unpack("<QQ", data[2:18])
    return dict(action=data[0], admin=data[1], sequence=sequence, time=time, previous=data[18:50],
                subject=(data[50:82], data[82:114]), key_id=data[114:146], signer=data[146:178],
                name=texts[0], team=texts[1], signed=data[:offset], signature=data[offset:])


def verify(entries, team_id, founder=None):
    """§16.2's verification. Returns (members, key id, earlier key ids); members are
    [signing key, receiving key, name, admin] in the order added."""
    if not entries:
        raise Refused("empty")
    parsed = [parse_entry(e) for e in entries]
    first = parsed[0]
    if (first["action"] != FOUND or first["sequence"] != 0 or first["previous"] != bytes(32) or first["admin"] != 1
            or first["signer"] != first["subject"][0] or not first["team"]):
        raise Refused("founding entry")
    if founder is not None and founder != first["subject"][0]:
        raise Refused("founder")
    members = []
    kid, earlier = first["key_id"], []
    for i, e in enumerate(parsed):
        try:
            sodium.crypto_sign_open(e["signature"] + SIGNING_CONTEXT + team_id + e["signed"], e["signer"])
        except Exception:
            raise Refused("signature")
        if e["sequence"] != i:
            raise Refused("sequence")
        if i == 0:
            members = [[first["subject"][0], first["subject"][1], first["name"], True]]
            continue
        if e["previous"] != entry_hash(entries[i - 1]):
            raise Refused("previous")
        if e["team"] or e["action"] == FOUND:
            raise Refused("second founding")
        signer = next((m for m in members if m[0] == e["signer"]), None)
        if signer is None or not signer[3]:
            raise Refused("not admin")
        index = next((n for n, m in enumerate(members) if m[0] == e["subject"][0]), None)
        rotates = e["key_id"] != kid
        if e["action"] == ADD:
            if index is not None or any(m[1] == e["subject"][1] for m in members):
                raise Refused("already a member")
            if rotates:
                raise Refused("key changed without a removal")
            members.append([e["subject"][0], e["subject"][1], e["name"], e["admin"] == 1])
        elif e["action"] == REMOVE:
            if index is None or members[index][1] != e["subject"][1] or e["admin"] != 0:
                raise Refused("not a member")
            if not rotates or e["key_id"] in earlier:
                raise Refused("removal without a new key")
            del members[index]
        else:
            if index is None or members[index][1] != e["subject"][1] or members[index][3] == (e["admin"] == 1):
                raise Refused("role")
            if rotates:
                raise Refused("key changed without a removal")
            members[index][3] = e["admin"] == 1
        if not any(m[3] for m in members):
            raise Refused("no admin left")
        if rotates:
            earlier.append(kid)
            kid = e["key_id"]
    return members, kid, earlier


def slot_id(sign_pk, team_id):
    return hashlib.blake2b(SLOT_CONTEXT + team_id + sign_pk, digest_size=16).digest()


def block(entries, earlier_keys):
    data = struct.pack("<H", len(entries))
    for e in entries:
        data += struct.pack("<H", len(e)) + e
    data += struct.pack("<H", len(earlier_keys))
    return data + b"".join(earlier_keys)


def sealed_block(team_id, team_key, entries, earlier_keys, nonce, version=1):
    ad = ref.preamble(TEAM_KEYS, version) + team_id
    return nonce + ref.aead_encrypt(ref.kdf_subkey(team_key, 5), nonce, ad, block(entries, earlier_keys))


def notices_bytes(team_id, removed):
    """§16.3's removal notices (version 2): `removed` are (remove entry, receiving key of its subject)."""
    data = struct.pack("<H", len(removed))
    for removal, box_pk in removed:
        sealed = sodium.crypto_box_seal(removal, box_pk)
        data += slot_id(parse_entry(removal)["subject"][0], team_id) + struct.pack("<H", len(sealed)) + sealed
    return data


def team_file(team_id, team_key, members, entries, earlier_keys, nonce, removed=()):
    """§16.3; `members` are (signing key, receiving key) pairs in the members' order; `removed`
    the removals to notice (version 2 when there are any)."""
    version = 2 if removed else 1
    slots = b"".join(slot_id(m[0], team_id) + sodium.crypto_box_seal(team_key, m[1]) for m in members)
    notices = notices_bytes(team_id, removed) if removed else b""
    return ref.preamble(TEAM_KEYS, version) + team_id + struct.pack("<H", len(members)) + slots + notices + sealed_block(
        team_id, team_key, entries, earlier_keys, nonce, version)


def split_team_file(data):
    """The parts of a version 1 or 2 file: (version, team id, slots, notices, sealed block)."""
    if data[:7] != ref.preamble(TEAM_KEYS)[:7] or data[7] not in (1, 2):
        raise Refused("preamble")
    version, team_id = data[7], data[8:24]
    count = struct.unpack("<H", data[24:26])[0]
    slots = [(data[26 + 96 * i:26 + 96 * i + 16], data[26 + 96 * i + 16:26 + 96 * (i + 1)]) for i in range(count)]
    offset, notices = 26 + 96 * count, []
    if version == 2:
        (notice_count,) = struct.unpack("<H", data[offset:offset + 2])
        if not 1 <= notice_count <= 64:
            raise Refused("notices")
        offset += 2
        for _ in range(notice_count):
            (length,) = struct.unpack("<H", data[offset + 16:offset + 18])
            if not 48 < length <= 48 + 372:
                raise Refused("notice length")
            notices.append((data[offset:offset + 16], data[offset + 18:offset + 18 + length]))
            offset += 18 + length
    return version, team_id, slots, notices, data[offset:]


def removal_notice(data, identity):
    """The remove entry a version 2 file notices `identity` of, checked (§16.3), or None."""
    _, team_id, _, notices, _ = split_team_file(data)
    for slot, sealed in reversed(notices):
        if slot != slot_id(identity.sign_pk, team_id):
            continue
        try:
            removal = sodium.crypto_box_seal_open(sealed, identity.box_pk, identity.box_sk)
            parsed = parse_entry(removal)
        except Exception:
            return None
        if parsed["action"] != REMOVE or parsed["subject"] != (identity.sign_pk, identity.box_pk):
            return None
        try:
            sodium.crypto_sign_open(parsed["signature"] + SIGNING_CONTEXT + team_id + parsed["signed"], parsed["signer"])
        except Exception:
            return None
        return parsed
    return None


def open_team_file(data, identity, founder=None):
    """§16.3's checks, with `identity`'s slot. Returns (members, team key, earlier keys)."""
    version, team_id, slots, _, rest = split_team_file(data)
    mine = [s for s in slots if s[0] == slot_id(identity.sign_pk, team_id)]
    if not mine:
        raise Refused("not a member")
    team_key = sodium.crypto_box_seal_open(mine[0][1], identity.box_pk, identity.box_sk)
    plain = ref.aead_decrypt(ref.kdf_subkey(team_key, 5), rest[:24], ref.preamble(TEAM_KEYS, version) + team_id, rest[24:])
    (entry_count,) = struct.unpack("<H", plain[:2])
    offset, entries = 2, []
    for _ in range(entry_count):
        (length,) = struct.unpack("<H", plain[offset:offset + 2])
        entries.append(plain[offset + 2:offset + 2 + length])
        offset += 2 + length
    (key_count,) = struct.unpack("<H", plain[offset:offset + 2])
    earlier = [plain[offset + 2 + 32 * i:offset + 2 + 32 * (i + 1)] for i in range(key_count)]
    if offset + 2 + 32 * key_count != len(plain):
        raise Refused("block length")
    members, kid, earlier_ids = verify(entries, team_id, founder)
    if [s[0] for s in slots] != [slot_id(m[0], team_id) for m in members]:
        raise Refused("slots")
    if key_id(team_key) != kid or [key_id(k) for k in reversed(earlier)] != earlier_ids:
        raise Refused("keys")
    return members, team_key, earlier


def vectors(out):
    team_id = bytes(range(0x40, 0x50))
    people = {name: bytes([seed]) * 32 for name, seed in (("alice", 0xA1), ("bob", 0xB0), ("carol", 0xC0))}
    ids = {name: Identity(key) for name, key in people.items()}
    k1, k2 = bytes([0x11]) * 32, bytes([0x22]) * 32
    keys = lambda i: (i.sign_pk, i.box_pk)  # noqa: E731
    a, b, c = ids["alice"], ids["bob"], ids["carol"]
    chain = []

    def add(*args, **kw):
        previous = entry_hash(chain[-1]) if chain else bytes(32)
        chain.append(entry(team_id, args[0], args[1], len(chain), 1_700_000_000 + len(chain), previous, *args[2:], **kw))

    add(FOUND, 1, keys(a), key_id(k1), a, b"alice", team_name=b"ops")
    add(ADD, 0, keys(b), key_id(k1), a, b"bob")
    add(ADD, 1, keys(c), key_id(k1), a, b"carol")
    add(REMOVE, 0, keys(b), key_id(k2), c, b"bob")
    add(ROLE, 0, keys(c), key_id(k2), a, b"carol")
    members, kid, earlier = verify(chain, team_id)
    assert [m[2] for m in members] == [b"alice", b"carol"] and kid == key_id(k2) and earlier == [key_id(k1)]
    nonce = bytes(range(0x60, 0x78))
    data = team_file(team_id, k2, [keys(a), keys(c)], chain, [k1], nonce)
    for name in ("alice", "carol"):
        opened = open_team_file(data, ids[name], founder=a.sign_pk)
        assert opened[1] == k2 and opened[2] == [k1]
    try:
        open_team_file(data, b)
        raise AssertionError("bob was removed")
    except Refused:
        pass

    fields = [("team_id", team_id)]
    for name, key in people.items():
        fields += [(f"{name}_vault_key", key), (f"{name}_recipient", ids[name].recipient()), (f"{name}_fingerprint", ids[name].fingerprint())]
    fields += [("team_key_1", k1), ("team_key_2", k2), ("key_id_1", key_id(k1)), ("key_id_2", key_id(k2))]
    for i, e in enumerate(chain):
        fields += [(f"entry{i}", e), (f"entry{i}_hash", entry_hash(e))]
    fields += [("block_nonce", nonce), ("sealed_block", sealed_block(team_id, k2, chain, [k1], nonce)), ("team_file", data)]
    # Version 2: the same list with the notice of bob's removal (entry 3), sealed to him.
    noticed = team_file(team_id, k2, [keys(a), keys(c)], chain, [k1], nonce, removed=[(chain[3], b.box_pk)])
    for name in ("alice", "carol"):
        assert open_team_file(noticed, ids[name], founder=a.sign_pk)[1] == k2
    told = removal_notice(noticed, b)
    assert told is not None and told["signer"] == c.sign_pk and told["time"] == 1_700_000_003
    assert removal_notice(noticed, a) is None
    fields += [("sealed_block_v2", sealed_block(team_id, k2, chain, [k1], nonce, 2)), ("team_file_v2", noticed)]
    fields += [("members", "alice:admin carol:member")]

    # Chains every reader MUST refuse, one rule each (§16.2).
    def forged(entries, reason):
        try:
            verify(entries, team_id)
        except Refused:
            fields.append((f"refuse_{len([f for f in fields if f[0].startswith('refuse_')])}",
                           ",".join(e.hex() for e in entries) + " => " + reason))
            return
        raise AssertionError("accepted: " + reason)

    def re_sign(e, signer, **changes):
        p = parse_entry(e)
        p.update(changes)
        return entry(team_id, p["action"], p["admin"], p["sequence"], p["time"], p["previous"], p["subject"], p["key_id"], signer,
                     p["name"], team_name=p["team"])

    flipped = bytearray(chain[1])
    flipped[90] ^= 1
    forged([chain[0], bytes(flipped)], "a member's key changed after signing")
    forged([chain[0], re_sign(chain[1], b)], "an add signed by someone who is not an admin")
    forged([chain[0], re_sign(chain[1], a, sequence=2)], "a sequence number out of place")
    forged([chain[0], re_sign(chain[1], a, previous=bytes(32))], "an entry that does not follow the one before")
    forged([re_sign(chain[0], b, subject=keys(b))] + chain[1:2], "a chain another key founded, whose next entry is alice's")
    forged(chain[:2] + [re_sign(chain[2], a, subject=keys(b), previous=entry_hash(chain[1]))], "someone added twice")
    forged(chain[:3] + [re_sign(chain[3], c, key_id=key_id(k1))], "a removal that keeps the key")
    forged(chain[:2] + [re_sign(chain[2], a, key_id=key_id(k2))], "an add that changes the key")
    forged([chain[0], re_sign(chain[1], a, action=REMOVE, subject=keys(a), key_id=key_id(k2), admin=0)], "the last admin removed")
    forged(chain[:1] + [re_sign(chain[1], a, team=b"ops2")], "a second founding")

    # A remove or role entry's name is informative: another spelling is accepted and not taken.
    renamed = chain[:3] + [re_sign(chain[3], c, name=b"robert")]
    renamed.append(re_sign(chain[4], a, name=b"someone", previous=entry_hash(renamed[3])))
    members, _, _ = verify(renamed, team_id)
    assert [m[2] for m in members] == [b"alice", b"carol"]
    fields += [("accept_informative_names", ",".join(e.hex() for e in renamed) + " => alice carol")]
    # The shortest entry is 245 bytes (a one-byte name): 244 is refused by its length alone.
    for short in (chain[1][:244],):
        try:
            parse_entry(short)
            raise AssertionError("a 244-byte entry was accepted")
        except Refused:
            fields.append(("short_entry_244", short.hex()))
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "team.vector"), "w") as f:
        f.write("# Team vaults (SPEC.md §16): identities, a membership chain, team.coffer, and chains to refuse\n")
        f.write("# Generated by Tools/reference/team_reference.py; do not edit.\n")
        for key, value in fields:
            f.write(f"{key}: {value.hex() if isinstance(value, bytes) else value}\n")


if __name__ == "__main__":
    root = os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "CofferTests", "Vectors", "team")
    vectors(root)
    print("team vectors written to", os.path.normpath(root))

#!/usr/bin/env python3
"""An independent reader and writer of Coffer v1 vaults, written from SPEC.md alone.

It uses PyNaCl (its own copy of libsodium) for Argon2id and XChaCha20-Poly1305 and Python's
hashlib for BLAKE2b and crypto_kdf, so agreement with the Swift implementation is evidence that
SPEC.md is complete. Usage:

    python3 coffer_reference.py list CONTAINER      (master password on the first line of stdin)
"""
import hashlib
import json
import os
import struct
import sys

from nacl import bindings as sodium

PREAMBLE = b"COFFER"
VERSION = 1
HEADER_LENGTH = 144
BLOCK = 512
KDF_CONTEXT = b"COFFERv1"
SUBKEY_RECORDS = 1
SUBKEY_INDEX_WRAP = 2


class Corrupt(Exception):
    pass


class WrongPassword(Exception):
    pass


def preamble(type_byte, version=VERSION):
    return PREAMBLE + bytes([type_byte, version])


def kdf_subkey(master_key, subkey_id, length=32):
    """crypto_kdf_derive_from_key, per SPEC.md §1, with hashlib instead of libsodium."""
    salt = struct.pack("<Q", subkey_id) + bytes(8)
    person = KDF_CONTEXT + bytes(8)
    return hashlib.blake2b(b"", digest_size=length, key=master_key, salt=salt, person=person).digest()


def pad(data, block=BLOCK):
    padded = data + b"\x80"
    return padded + bytes((-len(padded)) % block)


def unpad(data, block=BLOCK):
    if not data or len(data) % block:
        raise Corrupt("bad padding length")
    stripped = data.rstrip(b"\x00")
    if not stripped.endswith(b"\x80") or len(data) - len(stripped) >= block:
        raise Corrupt("bad padding")
    return stripped[:-1]


def aead_encrypt(key, nonce, ad, plaintext):
    return sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, ad, nonce, key)


def aead_decrypt(key, nonce, ad, ciphertext):
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(ciphertext, ad, nonce, key)


def argon2id(password, salt, ops, mem):
    return sodium.crypto_pwhash_alg(32, password, salt, ops, mem, sodium.crypto_pwhash_ALG_ARGON2ID13)


# --- §3 vault header ---------------------------------------------------------------------

def write_header(vault_id, vault_key, password, salt, nonce, ops, mem):
    ad = preamble(0x56) + vault_id + bytes([2, 0, 0, 0]) + struct.pack("<IQ", ops, mem) + salt
    wrapped = aead_encrypt(argon2id(password, salt, ops, mem), nonce, ad, vault_key)
    body = ad + nonce + wrapped
    return body + hashlib.blake2b(body, digest_size=16).digest()


def read_header(data, password, ops_range=(2, 10), mem_range=(64 << 20, 1 << 30)):
    if len(data) != HEADER_LENGTH or data[:8] != preamble(0x56):
        raise Corrupt("not a v1 vault header")
    if hashlib.blake2b(data[:128], digest_size=16).digest() != data[128:]:
        raise Corrupt("checksum mismatch")
    if data[25:28] != bytes(3):
        raise Corrupt("reserved bytes")
    ops, mem = struct.unpack("<IQ", data[28:40])
    if data[24] != 2 or not ops_range[0] <= ops <= ops_range[1] or not mem_range[0] <= mem <= mem_range[1]:
        raise Corrupt("KDF parameters out of range")
    kek = argon2id(password, data[40:56], ops, mem)
    try:
        vault_key = aead_decrypt(kek, data[56:80], data[:56], data[80:128])
    except Exception:
        raise WrongPassword()
    return data[8:24], vault_key


# --- §5 records ------------------------------------------------------------------------------

def record_document(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def seal_record(vault_id, vault_key, doc, nonce):
    record_id = bytes.fromhex(doc["id"])
    ad = preamble(0x52) + vault_id + record_id
    key = kdf_subkey(vault_key, SUBKEY_RECORDS)
    return preamble(0x52) + nonce + aead_encrypt(key, nonce, ad, pad(record_document(doc)))


def strict_json(data):
    """SPEC §5.2: UTF-8 JSON; duplicate member names, lone surrogates and NaN/Infinity are errors."""
    def no_duplicates(pairs):
        names = [name for name, _ in pairs]
        if len(names) != len(set(names)):
            raise Corrupt("duplicate member name")
        return dict(pairs)

    def no_constants(name):
        raise Corrupt(f"{name} is not JSON")

    try:
        text = data.decode("utf-8")  # strict: invalid UTF-8 and encoded surrogates are errors
        doc = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
        json.dumps(doc, ensure_ascii=False).encode("utf-8")  # a lone \ud800 escape cannot be encoded
    except (ValueError, UnicodeError) as error:
        raise Corrupt(f"not JSON: {error}")
    return doc


def open_record(vault_id, vault_key, record_id_hex, data):
    if data[:8] != preamble(0x52) or len(data) < 32 + BLOCK + 16 or (len(data) - 48) % BLOCK:
        raise Corrupt("not a v1 record")
    ad = preamble(0x52) + vault_id + bytes.fromhex(record_id_hex)
    try:
        padded = aead_decrypt(kdf_subkey(vault_key, SUBKEY_RECORDS), data[8:32], ad, data[32:])
    except Exception:
        raise Corrupt("authentication failed")
    doc = strict_json(unpad(padded))
    if not isinstance(doc, dict) or doc.get("id") != record_id_hex:
        raise Corrupt("id does not match file name")
    return doc


# --- §6 the identity index --------------------------------------------------------------------

SUBKEY_INDEX = 2
IDENTITY_SLOTS = 256
SLOTS = 512


def index_keys(vault_key):
    index_key = kdf_subkey(vault_key, SUBKEY_INDEX)
    return index_key, kdf_subkey(index_key, 1)


def site_of(host):
    """The registrable domain. The reference uses the last two labels, which is what the Public
    Suffix List gives for the names in the vectors; a real reader MUST use the PSL (§7.1)."""
    return ".".join(host.split(".")[-2:])


def service_key(identifier, service_type):
    """§7.1: (site, host, scheme, port, path) of a service identifier; host is "" when it does
    not parse. ASCII names only (the vectors need no IDNA)."""
    from urllib.parse import urlsplit
    if service_type == "URL":
        parts = urlsplit(identifier)
        if not parts.scheme or not parts.hostname:
            return identifier.lower(), "", "", 0, "/"
        host, scheme, port, path = parts.hostname.lower().rstrip("."), parts.scheme.lower(), parts.port or 0, parts.path or "/"
    else:
        host, scheme, port, path = identifier.lower().rstrip("."), "", 0, "/"
        if ":" in host:
            host, port = host.rsplit(":", 1)[0], int(host.rsplit(":", 1)[1])
    return site_of(host), host, scheme, port, path


def bucket_byte(bucket_key, name):
    return hashlib.blake2b(name.encode(), digest_size=16, key=bucket_key).digest()[0]


def identity_slot(bucket_key, key, layout):
    """§6.3: layout 1 files by site alone; layout 2 takes the high four bits from the site and
    the low four from the host (the site when the identifier did not parse)."""
    site, host = key[0], key[1]
    if layout == 1:
        return bucket_byte(bucket_key, site)
    return (bucket_byte(bucket_key, site) & 0xF0) | (bucket_byte(bucket_key, host or site) & 0x0F)


def lp(text):
    data = text.encode()
    return struct.pack("<H", len(data)) + data


MATCH_MODES = {"host": 0, "site": 1, "exact": 2, "never": 3}


def identity_payload(entries, layout=2):
    """entries: (record id bytes, rank, type byte, mode, key, identifier, user), sorted as §6.3."""
    entries = sorted(entries, key=lambda e: (e[0], e[5].encode(), e[6].encode()))
    out = bytes([2 if layout == 2 else 0]) + struct.pack("<I", len(entries))
    for rid, rank, kind, mode, key, identifier, user in entries:
        site, host, scheme, port, path = key
        if layout == 2:
            out += rid + struct.pack("<qBBH", rank, kind, MATCH_MODES[mode], port)
            out += lp(site) + lp(host) + lp(scheme) + lp(path) + lp(identifier) + lp(user)
        else:
            out += rid + struct.pack("<qB", rank, kind) + lp(site) + lp(identifier) + lp(user)
    return out


def ledger_payload(entries):
    """entries: (record id bytes, revision, file hash, identity slots)."""
    out = b"\x01" + struct.pack("<I", len(entries))
    for rid, revision, digest, slots in sorted(entries):
        out += rid + struct.pack("<Q", revision) + digest + bytes([len(slots)]) + bytes(slots)
    return out


def seal_shard(index_key, vault_id, slot, shard_id, payload, nonce):
    ad = preamble(0x53) + vault_id + struct.pack("<H", slot) + shard_id
    return preamble(0x53) + nonce + aead_encrypt(index_key, nonce, ad, pad(payload))


def seal_manifest(index_key, vault_id, generation, shards, nonce, layout=2):
    """The manifest's version byte is the index layout (§6.2), authenticated with the rest."""
    plaintext = struct.pack("<QH", generation, SLOTS) + b"".join(shards.get(slot, bytes(16)) for slot in range(SLOTS))
    return preamble(0x4D, layout) + nonce + aead_encrypt(index_key, nonce, preamble(0x4D, layout) + vault_id, plaintext)


def build_index(vault_id, vault_key, records, generation, next_bytes, layout=2):
    """records: (doc, sealed file bytes). Returns {relative path: bytes}; `next_bytes(n)` supplies
    the shard ids and nonces, so vectors are reproducible."""
    index_key, bucket_key = index_keys(vault_key)
    buckets, ledgers = {}, {}
    for doc, sealed in records:
        rid = bytes.fromhex(doc["id"])
        slots = set()
        for service in doc["serviceIdentifiers"]:
            key = service_key(service["identifier"], service["type"])
            slot = identity_slot(bucket_key, key, layout)
            slots.add(slot)
            kind = 1 if service["type"] == "URL" else 0
            buckets.setdefault(slot, []).append(
                (rid, 0, kind, doc.get("match", "host"), key, service["identifier"], doc["user"]))
        digest = hashlib.blake2b(sealed, digest_size=32).digest()
        ledgers.setdefault(IDENTITY_SLOTS + rid[0], []).append((rid, doc["revision"], digest, sorted(slots)))
    files, shards = {}, {}
    for slot, payload in sorted([(s, identity_payload(e, layout)) for s, e in buckets.items()] + [(s, ledger_payload(e)) for s, e in ledgers.items()]):
        shard_id = next_bytes(16)
        shards[slot] = shard_id
        files["index/shards/" + shard_id.hex()] = seal_shard(index_key, vault_id, slot, shard_id, payload, next_bytes(24))
    files["index/manifest"] = seal_manifest(index_key, vault_id, generation, shards, next_bytes(24), layout)
    return files


def index_payloads(container, vault_id, vault_key):
    """The manifest's generation and, for each non-empty slot in order, (slot, unpadded
    payload), every file opened as §6.2 requires."""
    index_key, _ = index_keys(vault_key)
    with open(os.path.join(container, "index", "manifest"), "rb") as f:
        data = f.read()
    if data[:7] != preamble(0x4D)[:7] or data[7] not in (1, 2):
        raise Corrupt("not a manifest of index layout 1 or 2")
    plaintext = aead_decrypt(index_key, data[8:32], data[:8] + vault_id, data[32:])
    generation, count = struct.unpack("<QH", plaintext[:10])
    payloads = []
    for slot in range(count):
        shard_id = plaintext[10 + 16 * slot:26 + 16 * slot]
        if shard_id == bytes(16):
            continue
        with open(os.path.join(container, "index", "shards", shard_id.hex()), "rb") as f:
            blob = f.read()
        ad = preamble(0x53) + vault_id + struct.pack("<H", slot) + shard_id
        payloads.append((slot, unpad(aead_decrypt(index_key, blob[8:32], ad, blob[32:]))))
    return generation, payloads


def read_index(container, vault_id, vault_key):
    """Every identity and ledger entry, checked as §6 requires."""
    generation, payloads = index_payloads(container, vault_id, vault_key)
    identities, ledger = [], {}
    for slot, payload in payloads:
        kind, n, at = payload[0], struct.unpack("<I", payload[1:5])[0], 5
        for _ in range(n):
            rid = payload[at:at + 16]
            if kind in (0, 2):
                rank, service_type = struct.unpack("<q", payload[at + 16:at + 24])[0], payload[at + 24]
                at += 25
                mode = "host"
                if kind == 2:
                    mode = {v: k for k, v in MATCH_MODES.items()}[payload[at]]
                    at += 3  # mode u8, port u16
                strings = []
                for _ in range(6 if kind == 2 else 3):
                    length = struct.unpack("<H", payload[at:at + 2])[0]
                    strings.append(payload[at + 2:at + 2 + length].decode())
                    at += 2 + length
                identifier, user = strings[-2], strings[-1]
                identities.append((rid.hex(), identifier, user, rank, slot, mode))
            else:
                revision = struct.unpack("<Q", payload[at + 16:at + 24])[0]
                digest, nslots = payload[at + 24:at + 56], payload[at + 56]
                ledger[rid.hex()] = (revision, digest)
                at += 57 + nslots
    return generation, identities, ledger


def listing_plaintext(container, vault_id, vault_key):
    """A device's listing snapshot plaintext (SPEC.md §6.6): every non-empty identity bucket
    payload in slot order, each framed as u32 LE length ‖ payload."""
    _, payloads = index_payloads(container, vault_id, vault_key)
    return b"".join(struct.pack("<I", len(payload)) + payload
                    for slot, payload in payloads if slot < IDENTITY_SLOTS)


def seal_listing(vault_key, vault_id, manifest_file, framed, nonce):
    """The sealed snapshot, bound to the exact manifest file it was read under."""
    index_key, _ = index_keys(vault_key)
    ad = preamble(0x4C) + vault_id + hashlib.blake2b(manifest_file, digest_size=32).digest()
    return preamble(0x4C) + nonce + aead_encrypt(index_key, nonce, ad, framed)


def read_container(container, password, **policy):
    with open(os.path.join(container, "vault.coffer"), "rb") as f:
        vault_id, vault_key = read_header(f.read(), password, **policy)
    records = []
    records_dir = os.path.join(container, "records")
    for shard in sorted(os.listdir(records_dir)):
        for name in sorted(os.listdir(os.path.join(records_dir, shard))):
            with open(os.path.join(records_dir, shard, name), "rb") as f:
                records.append(open_record(vault_id, vault_key, name, f.read()))
    return vault_id, records


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "list":
        sys.exit(__doc__)
    password = sys.stdin.buffer.readline().rstrip(b"\n")
    relaxed = os.environ.get("COFFER_REFERENCE_RELAXED") == "1"
    policy = {"ops_range": (1, 10), "mem_range": (8192, 1 << 30)} if relaxed else {}
    try:
        _, docs = read_container(sys.argv[2], password, **policy)
    except WrongPassword:
        sys.exit("wrong password")
    for doc in docs:
        print(json.dumps(doc, sort_keys=True, ensure_ascii=False))
    if os.path.exists(os.path.join(sys.argv[2], "index", "manifest")):
        with open(os.path.join(sys.argv[2], "vault.coffer"), "rb") as f:
            vault_id, vault_key = read_header(f.read(), password, **policy)
        generation, identities, ledger = read_index(sys.argv[2], vault_id, vault_key)
        print(f"index generation {generation}: {len(identities)} identities, {len(ledger)} ledger entries")

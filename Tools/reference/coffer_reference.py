#!/usr/bin/env python3
"""An independent reader and writer of Coffer v1 vaults, written from SPEC.md alone.

It uses PyNaCl (its own copy of libsodium) for Argon2id and XChaCha20-Poly1305 and Python's
hashlib for BLAKE2b and crypto_kdf, so agreement with the Swift implementation is evidence that
SPEC.md is complete. Usage:

    python3 coffer_reference.py list CONTAINER      (master password on the first line of stdin)
"""
import base64
import calendar
import hashlib
import json
import unicodedata
import os
import struct
import sys
import time

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


# --- §4 vault header ---------------------------------------------------------------------

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


# --- §6 records ------------------------------------------------------------------------------

def record_document(doc):
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def seal_record(vault_id, vault_key, doc, nonce):
    record_id = bytes.fromhex(doc["id"])
    ad = preamble(0x52) + vault_id + record_id
    key = kdf_subkey(vault_key, SUBKEY_RECORDS)
    return preamble(0x52) + nonce + aead_encrypt(key, nonce, ad, pad(record_document(doc)))


def strict_json(data):
    """SPEC §6.2: UTF-8 JSON; duplicate member names, lone surrogates and NaN/Infinity are errors."""
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
    for member in ("serviceIdentifiers", "user", "password", "created", "modified", "revision"):
        if member not in doc:
            raise Corrupt(f"missing {member}")  # §6.2: the required members
    fields = doc.get("fields", [])
    if isinstance(fields, dict):  # format 0.x: names equal after NFC are refused (§6.2)
        if len({unicodedata.normalize("NFC", name) for name in fields}) != len(fields):
            raise Corrupt("fields: two names canonically equivalent")
    check_card_and_identity(doc)
    return doc


def check_card_and_identity(doc):
    """§6.8: `card` only on a card, `identity` only on an identity; their members strings,
    except months (1-12) and years (1000-9999) as integers (null meaning absent), `addressLines`
    an array of at most 8 strings, `country` empty or two upper-case ASCII letters."""
    kind = doc.get("kind", "login")
    for member, owner in (("card", "card"), ("identity", "identity")):
        value = doc.get(member)
        if value is None and member not in doc:
            continue
        if not isinstance(value, dict):
            raise Corrupt(f"{member}: not an object")
        if value and kind != owner:
            raise Corrupt(f"{member} on an item that is not a {owner}")
    card = doc.get("card", {})
    for name in ("cardholder", "number", "brand", "code", "pin", "issueNumber"):
        if not isinstance(card.get(name, ""), str):
            raise Corrupt(f"card: {name}")
    for name, low, high in (("expiryMonth", 1, 12), ("startMonth", 1, 12), ("expiryYear", 1000, 9999), ("startYear", 1000, 9999)):
        number = card.get(name)
        if number is not None and (type(number) is not int or not low <= number <= high):
            raise Corrupt(f"card: {name}")
    identity = doc.get("identity", {})
    for name, value in identity.items():
        if name == "addressLines":
            if not isinstance(value, list) or len(value) > 8 or not all(isinstance(line, str) for line in value):
                raise Corrupt("identity: addressLines")
        elif name in IDENTITY_TEXT_MEMBERS and not isinstance(value, str):
            raise Corrupt(f"identity: {name}")
    country = identity.get("country", "")
    if country and not (len(country) == 2 and all("A" <= c <= "Z" for c in country)):
        raise Corrupt("identity: country")


IDENTITY_TEXT_MEMBERS = {"title", "givenName", "middleName", "familyName", "company", "city", "region", "postalCode",
                         "country", "phone", "email", "nationalIdentifier", "passportNumber", "licenseNumber"}


# --- §7 the identity index --------------------------------------------------------------------

SUBKEY_INDEX = 2
IDENTITY_SLOTS = 256
SLOTS = 512


def index_keys(vault_key):
    index_key = kdf_subkey(vault_key, SUBKEY_INDEX)
    return index_key, kdf_subkey(index_key, 1)


def site_of(host):
    """The registrable domain. The reference uses the last two labels, which is what the Public
    Suffix List gives for the names in the vectors; a real reader MUST use the PSL (§8.1)."""
    return ".".join(host.split(".")[-2:])


def service_key(identifier, service_type):
    """§8.1: (site, host, scheme, port, path) of a service identifier; host is "" when it does
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
    """§7.3: layout 1 files by site alone; layout 2 takes the high four bits from the site and
    the low four from the host (the site when the identifier did not parse)."""
    site, host = key[0], key[1]
    if layout == 1:
        return bucket_byte(bucket_key, site)
    return (bucket_byte(bucket_key, site) & 0xF0) | (bucket_byte(bucket_key, host or site) & 0x0F)


def lp(text):
    data = text.encode()
    return struct.pack("<H", len(data)) + data


MATCH_MODES = {"host": 0, "site": 1, "exact": 2, "never": 3}


ITEM_KINDS = {"login": 0, "note": 1, "card": 2, "identity": 3, "ssh-key": 4, "secret": 5}
ITEM_TYPE = 4
PASSKEY_TYPE = 5
ATTRIBUTE_TYPE = 6


def attribute_digest(name, value):
    """§7.3: a Secret Service attribute pair's digest (unkeyed BLAKE2b-128, hex)."""
    data = b"coffer-attribute" + struct.pack("<I", len(name.encode())) + name.encode() + value.encode()
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def identity_payload(entries, layout=4):
    """entries, sorted as §7.3 (record id, type, then two strings as UTF-8 bytes):
    identities (record id bytes, rank, type byte 0-3, mode, key, identifier, user, name) and,
    in layouts 3 and 4, item entries (record id bytes, 0, 4, kind, listed, name, user, service);
    in layout 4 both end with their record's details (modified, tags), written after them.
    Layout 2 entries have no name; layout 1 entries no parsed key either."""
    def order(entry):
        rid, _, type_byte = entry[:3]
        first, second = (entry[3], entry[4]) if type_byte == ATTRIBUTE_TYPE else (entry[5], entry[6])
        return rid, type_byte, first.encode(), second.encode()
    entries = sorted(entries, key=order)
    out = bytes([{1: 0, 2: 2, 3: 3, 4: 4}[layout]]) + struct.pack("<I", len(entries))
    for entry in entries:
        rid, rank, type_byte = entry[:3]
        details = details_bytes(*entry[8]) if layout == 4 and type_byte != ATTRIBUTE_TYPE else b""
        if type_byte == ITEM_TYPE:
            _, _, _, kind, listed, name, user, service = entry[:8]
            out += rid + struct.pack("<qBBB", 0, ITEM_TYPE, ITEM_KINDS[kind], 1 if listed else 0)
            out += lp(name) + lp(user) + lp(service) + details
            continue
        if type_byte == ATTRIBUTE_TYPE:
            _, _, _, digest, collection = entry
            out += rid + struct.pack("<qB", 0, ATTRIBUTE_TYPE) + lp(digest) + lp(collection)
            continue
        _, _, _, mode, key, identifier, user, name = entry[:8]
        site, host, scheme, port, path = key
        if layout >= 2:
            out += rid + struct.pack("<qBBH", rank, type_byte, MATCH_MODES[mode], port)
            out += lp(site) + lp(host) + lp(scheme) + lp(path) + lp(identifier) + lp(user) + (lp(name) if layout >= 3 else b"") + details
        else:
            out += rid + struct.pack("<qB", rank, type_byte) + lp(site) + lp(identifier) + lp(user)
    return out


def record_details(doc):
    """§7.3 (layout 4): a record's `modified` in Unix seconds and the tags its entries file: in
    order, the first 255 whose UTF-8 is at most 255 bytes."""
    modified = calendar.timegm(time.strptime(doc["modified"], "%Y-%m-%dT%H:%M:%SZ"))
    return modified, [tag for tag in doc.get("tags", []) if len(tag.encode()) <= 255][:255]


def details_bytes(modified, tags):
    """`modified i64 ‖ tag count u8 ‖ tags` (§7.3, layout 4)."""
    return struct.pack("<qB", modified, len(tags)) + b"".join(lp(tag) for tag in tags)


def index_entries(doc, layout=4):
    """§7.3: a login has a password identity (type 0/1) per service identifier and, with an
    `otp`, a one-time-code identity (type 2/3) per service; in layouts 3 and 4 every record has one
    item entry (type 4), listed when it has no identity, and in layout 4 each identity and item
    entry ends with the record's details. Layouts 1 and 2 hold password identities only."""
    rid = bytes.fromhex(doc["id"])
    entries = []
    kind = doc.get("kind", "login")
    details = (record_details(doc),) if layout == 4 else ()
    bases = ([0] + ([2] if "otp" in doc and layout >= 3 else [])) if kind == "login" else []
    for base in bases:
        for service in doc["serviceIdentifiers"]:
            key = service_key(service["identifier"], service["type"])
            type_byte = base + (1 if service["type"] == "URL" else 0)
            entries.append((rid, 0, type_byte, doc.get("match", "host") if layout >= 2 else "host", key, service["identifier"],
                            doc["user"], doc.get("name", "") if layout >= 3 else "") + details)
    if layout >= 3:
        services = sorted((s["identifier"] for s in doc["serviceIdentifiers"]), key=lambda text: text.encode())
        if kind == "ssh-key":
            summary = ssh_public_key_text(doc)
        elif kind == "secret":
            summary = doc.get("secretService", {}).get("collection", "login")
        else:
            summary = services[0] if services else ""
        entries.append((rid, 0, ITEM_TYPE, kind, not entries, doc.get("name", ""), doc["user"], summary) + details)
        if kind == "secret":  # one attribute entry per pair (§6.5)
            member = doc.get("secretService", {})
            for name, value in member.get("attributes", {}).items():
                entries.append((rid, 0, ATTRIBUTE_TYPE, attribute_digest(name, value), member.get("collection", "login")))
    return entries


def ssh_public_key_text(doc):
    """§7.3: an ssh-key item's summary is its `publicKey` field's first two words (§6.3)."""
    fields = doc.get("fields", [])
    if isinstance(fields, dict):
        fields = [{"name": name, "value": value} for name, value in fields.items()]
    for field in fields:
        if field["name"].lower().replace(" ", "") == "publickey":
            words = field["value"].split()
            return " ".join(words[:2]) if len(words) >= 2 else ""
    return ""


def item_filing_name(entry):
    """§7.3: `name:` + the name in lower case, or `id:` + the record id for an unnamed item."""
    rid, name = entry[0], entry[5]
    return "name:" + name.lower() if name else "id:" + rid.hex()


def ledger_payload(entries):
    """entries: (record id bytes, revision, file hash, identity slots)."""
    out = b"\x01" + struct.pack("<I", len(entries))
    for rid, revision, digest, slots in sorted(entries):
        out += rid + struct.pack("<Q", revision) + digest + bytes([len(slots)]) + bytes(slots)
    return out


def seal_shard(index_key, vault_id, slot, shard_id, payload, nonce):
    ad = preamble(0x53) + vault_id + struct.pack("<H", slot) + shard_id
    return preamble(0x53) + nonce + aead_encrypt(index_key, nonce, ad, pad(payload))


def seal_manifest(index_key, vault_id, generation, shards, nonce, layout=4):
    """The manifest's version byte is the index layout (§7.2), authenticated with the rest."""
    plaintext = struct.pack("<QH", generation, SLOTS) + b"".join(shards.get(slot, bytes(16)) for slot in range(SLOTS))
    return preamble(0x4D, layout) + nonce + aead_encrypt(index_key, nonce, preamble(0x4D, layout) + vault_id, plaintext)


def entry_filing_name(entry):
    """§7.3: what an entry is filed under: an item's filing name, an attribute's
    `attribute:` + digest, an identity's host (its site when the host is empty)."""
    if entry[2] == ITEM_TYPE:
        return item_filing_name(entry)
    if entry[2] == ATTRIBUTE_TYPE:
        return "attribute:" + entry[3]
    return entry[4][1] or entry[4][0]


def index_groups(bucket_key, records, layout=4):
    """The entries of each identity bucket and each ledger shard, by slot."""
    buckets, ledgers = {}, {}
    for doc, sealed in records:
        rid = bytes.fromhex(doc["id"])
        slots = set()
        for entry in index_entries(doc, layout):
            if entry[2] in (ITEM_TYPE, ATTRIBUTE_TYPE):
                slot = bucket_byte(bucket_key, entry_filing_name(entry))
            else:
                slot = identity_slot(bucket_key, entry[4], layout)
            slots.add(slot)
            buckets.setdefault(slot, []).append(entry)
        digest = hashlib.blake2b(sealed, digest_size=32).digest()
        ledgers.setdefault(IDENTITY_SLOTS + rid[0], []).append((rid, doc["revision"], digest, sorted(slots)))
    return buckets, ledgers


def entry_part(bucket_key, entry):
    """§7.6: the part of a bucket entry, the second byte of the keyed hash of its filing name."""
    return hashlib.blake2b(entry_filing_name(entry).encode(), digest_size=16, key=bucket_key).digest()[1] & 0x0F


def bucket_parts(vault_key, vault_id, slot, shard_id, entries, nonces, layout=4):
    """§7.6: a device's parts file of one shard: its entries (identity bucket entries for a slot
    below 256, ledger entries above) split in 16 parts, each sealed under its own nonce."""
    index_key, bucket_key = index_keys(vault_key)
    groups = [[] for _ in range(16)]
    for entry in entries:
        groups[(entry[0][1] & 0x0F) if slot >= IDENTITY_SLOTS else entry_part(bucket_key, entry)].append(entry)
    sealed = []
    for part, group in enumerate(groups):
        payload = ledger_payload(group) if slot >= IDENTITY_SLOTS else identity_payload(group, layout)
        ad = preamble(0x50) + vault_id + struct.pack("<H", slot) + shard_id + bytes([part])
        sealed.append(nonces[part] + aead_encrypt(index_key, nonces[part], ad, payload))
    return preamble(0x50) + shard_id + b"".join(struct.pack("<I", len(s)) for s in sealed) + b"".join(sealed), groups


def manifest_shards(container, vault_id, vault_key):
    """The shard id of every non-empty slot of the container's manifest."""
    index_key, _ = index_keys(vault_key)
    with open(os.path.join(container, "index", "manifest"), "rb") as f:
        data = f.read()
    plaintext = aead_decrypt(index_key, data[8:32], data[:8] + vault_id, data[32:])
    ids = [plaintext[10 + 16 * slot:26 + 16 * slot] for slot in range(SLOTS)]
    return {slot: shard_id for slot, shard_id in enumerate(ids) if shard_id != bytes(16)}


def build_index(vault_id, vault_key, records, generation, next_bytes, layout=4):
    """records: (doc, sealed file bytes). Returns {relative path: bytes}; `next_bytes(n)` supplies
    the shard ids and nonces, so vectors are reproducible."""
    index_key, bucket_key = index_keys(vault_key)
    buckets, ledgers = index_groups(bucket_key, records, layout)
    files, shards = {}, {}
    for slot, payload in sorted([(s, identity_payload(e, layout)) for s, e in buckets.items()] + [(s, ledger_payload(e)) for s, e in ledgers.items()]):
        shard_id = next_bytes(16)
        shards[slot] = shard_id
        files["index/shards/" + shard_id.hex()] = seal_shard(index_key, vault_id, slot, shard_id, payload, next_bytes(24))
    files["index/manifest"] = seal_manifest(index_key, vault_id, generation, shards, next_bytes(24), layout)
    return files


def index_payloads(container, vault_id, vault_key):
    """The manifest's generation and, for each non-empty slot in order, (slot, unpadded
    payload), every file opened as §7.2 requires."""
    index_key, _ = index_keys(vault_key)
    with open(os.path.join(container, "index", "manifest"), "rb") as f:
        data = f.read()
    if data[:7] != preamble(0x4D)[:7] or data[7] not in (1, 2, 3, 4):
        raise Corrupt("not a manifest of index layout 1 to 4")
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
    """Every identity, item entry and ledger entry. Identities are (record id, identifier,
    user, rank, slot, mode, type byte, name, details); items (record id, kind, listed, name, user,
    service, slot, details), details being (modified, tag list as stored: count u8 ‖ strings),
    (0, b"") before layout 4. Attribute entries (type 6) are read and checked for shape, not returned."""
    generation, payloads = index_payloads(container, vault_id, vault_key)
    identities, items, ledger, attributes = [], [], {}, []

    def strings(payload, at, count):
        values = []
        for _ in range(count):
            length = struct.unpack("<H", payload[at:at + 2])[0]
            values.append(payload[at + 2:at + 2 + length].decode())
            at += 2 + length
        return values, at

    def details(payload, at, kind):
        if kind != 4:
            return (0, b""), at
        modified, count = struct.unpack("<qB", payload[at:at + 9])
        tags, end = strings(payload, at + 8 + 1, count)
        assert all(len(tag.encode()) <= 255 for tag in tags)
        return (modified, payload[at + 8:end]), end

    for slot, payload in payloads:
        kind, n, at = payload[0], struct.unpack("<I", payload[1:5])[0], 5
        for _ in range(n):
            rid = payload[at:at + 16]
            if kind in (0, 2, 3, 4):
                rank, type_byte = struct.unpack("<q", payload[at + 16:at + 24])[0], payload[at + 24]
                at += 25
                if type_byte == ITEM_TYPE:
                    item_kind = {v: k for k, v in ITEM_KINDS.items()}[payload[at]]
                    listed = payload[at + 1] == 1
                    (name, user, service), at = strings(payload, at + 2, 3)
                    item_details, at = details(payload, at, kind)
                    items.append((rid.hex(), item_kind, listed, name, user, service, slot, item_details))
                    continue
                if type_byte == ATTRIBUTE_TYPE:  # a Secret Service attribute digest and collection
                    (digest, collection), at = strings(payload, at, 2)
                    attributes.append((rid.hex(), digest, collection, slot))
                    continue
                mode = "host"
                if kind in (2, 3, 4):
                    mode = {v: k for k, v in MATCH_MODES.items()}[payload[at]]
                    at += 3  # mode u8, port u16
                values, at = strings(payload, at, {0: 3, 2: 6, 3: 7, 4: 7}[kind])
                if type_byte == PASSKEY_TYPE:  # the credential id and user handle follow the name
                    _, at = strings(payload, at, 2)
                identity_details, at = details(payload, at, kind)
                if kind >= 3:
                    identifier, user, name = values[-3], values[-2], values[-1]
                else:
                    identifier, user, name = values[-2], values[-1], ""
                identities.append((rid.hex(), identifier, user, rank, slot, mode, type_byte, name, identity_details))
            else:
                revision = struct.unpack("<Q", payload[at + 16:at + 24])[0]
                digest, nslots = payload[at + 24:at + 56], payload[at + 56]
                ledger[rid.hex()] = (revision, digest)
                at += 57 + nslots
    return generation, identities, items, ledger


def listing_rows(container, vault_id, vault_key):
    """Every identity and listed item entry as a listing row (slot, record id, entry, kind, type,
    mode, rank, identifier, user, name, modified, tag list as stored), sorted by first column (a
    named item's name, else its service; a URL login's host and port; else the identifier), user,
    record id, entry."""
    _, identities, items, _ = read_index(container, vault_id, vault_key)
    rows = []
    for rid, identifier, user, rank, slot, mode, type_byte, name, (modified, tags) in identities:
        entry = 2 if type_byte == PASSKEY_TYPE else (1 if type_byte in (2, 3) else 0)
        url = 0 if type_byte == PASSKEY_TYPE else type_byte & 1
        rows.append((slot, bytes.fromhex(rid), entry, 0, url, MATCH_MODES[mode], rank, identifier, user, name, modified, tags))
    for rid, kind, listed, name, user, service, slot, (modified, tags) in items:
        if listed:
            rows.append((slot, bytes.fromhex(rid), 3, ITEM_KINDS[kind], 1, MATCH_MODES["never"], 0, service, user, name, modified, tags))
    return sorted(rows, key=lambda row: (first_column(row).encode(), row[8].encode(), row[1], row[2]))


def host_and_port(identifier):
    """A URL's host and port: after the first "://", up to the next "/", "?" or "#"."""
    if "://" not in identifier:
        return identifier
    rest = identifier[identifier.index("://") + 3:]
    for stop in "/?#":
        rest = rest.split(stop, 1)[0]
    return rest


def first_column(row):
    if row[2] == 3:
        return row[9] or row[7]
    return host_and_port(row[7]) if row[4] == 1 else row[7]


def listing_table(container, vault_id, vault_key):
    """A device's listing table (SPEC.md §7.6), one chunk: each row `slot ‖ record id ‖ entry ‖
    kind ‖ type ‖ mode ‖ rank i64 ‖ identifier ‖ user ‖ name ‖ modified i64 ‖ tags` (the entry's
    stored tag list as one string)."""
    out = b""
    for row in listing_rows(container, vault_id, vault_key):
        out += bytes([row[0]]) + row[1] + bytes(row[2:6]) + struct.pack("<q", row[6])
        for text in row[7:10]:
            out += struct.pack("<H", len(text.encode())) + text.encode()
        out += struct.pack("<qH", row[10], len(row[11])) + row[11]
    return out


def completion_table(container, vault_id, vault_key):
    """A device's completion table (SPEC.md §7.6), one chunk: `u32 count ‖ u16 length ‖ section ‖
    candidate` per candidate, sorted by `section ‖ candidate`."""
    counts = {}
    def add(section, text, user=""):
        if not text or any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in text + user):
            return
        key = bytes([section]) + text.encode() + (b"/" + user.encode() if user else b"")
        counts[key] = counts.get(key, 0) + 1
    for row in listing_rows(container, vault_id, vault_key):
        if row[2] == 1:
            continue
        add(0, row[9])
        if row[2] == 3:
            continue
        service, host = row[7], host_and_port(row[7])
        add(0, service)
        add(0, host, row[8])
        add(1, service)
        if host != service:
            add(1, host)
    return b"".join(struct.pack("<IH", counts[key], len(key)) + key for key in sorted(counts)), min(counts), len(counts)


def seal_snapshot(vault_key, vault_id, type_byte, container, table, count, key, chunk_id, nonces):
    """A derived table (version 5) of one chunk: (the header file, the chunk file). The header
    names the manifest's identity shards and the chunk by its id."""
    index_key, _ = index_keys(vault_key)
    with open(os.path.join(container, "index", "manifest"), "rb") as f:
        manifest = f.read()
    plaintext = aead_decrypt(index_key, manifest[8:32], manifest[:8] + vault_id, manifest[32:])
    layout = manifest[7]
    ad = preamble(type_byte, 5) + vault_id
    chunk = nonces[1] + aead_encrypt(index_key, nonces[1], ad + chunk_id, table)
    header = bytes([layout]) + plaintext[10:10 + 16 * 256] + struct.pack("<I", 1)
    header += chunk_id + struct.pack("<IIH", len(chunk), count, len(key)) + key
    return preamble(type_byte, 5) + nonces[0] + aead_encrypt(index_key, nonces[0], ad, header), chunk


# --- §15 sync: tombstones, the header seal, the merge rules --------------------------------

def seal_tombstone(vault_id, vault_key, record_id, revision, deleted, nonce):
    ad = preamble(0x54) + vault_id + record_id
    key = kdf_subkey(vault_key, SUBKEY_RECORDS)
    return preamble(0x54) + nonce + aead_encrypt(key, nonce, ad, struct.pack("<QQ", revision, deleted))


def open_tombstone(vault_id, vault_key, record_id, data):
    if len(data) != 64 or data[:8] != preamble(0x54):
        raise Corrupt("not a tombstone")
    try:
        plain = aead_decrypt(kdf_subkey(vault_key, SUBKEY_RECORDS), data[8:32], preamble(0x54) + vault_id + record_id, data[32:])
    except Exception:
        raise Corrupt("tombstone fails authentication")
    revision, deleted = struct.unpack("<QQ", plain)
    if revision < 1:
        raise Corrupt("tombstone revision 0")
    return revision, deleted


def seal_header(vault_id, vault_key, header, nonce):
    ad = preamble(0x48) + vault_id
    digest = hashlib.blake2b(header, digest_size=32).digest()
    return preamble(0x48) + nonce + aead_encrypt(kdf_subkey(vault_key, SUBKEY_RECORDS), nonce, ad, digest)


def merge_decide(base, local, remote, local_tombstone, remote_tombstone, base_tombstone):
    """SPEC §15.3 for one record id. A version is (revision, object, modified, file hash[, content])
    or None — content names the document apart from its revision (default: the object), so two
    versions of one content at two revisions are a re-seal of each other; a tombstone is
    (revision, object, file hash) or None; base_tombstone an object or None.
    Returns (record outcome, tombstone outcome, remote behind, put back); the record outcome is
    "absent", "local", "remote", "merged" or "local:N" (the local document at revision N); the
    tombstone outcome "none", "local", "remote" or "raised:N" (a new tombstone of revision N)."""
    def content(version):
        return version[4] if len(version) > 4 else version[1]
    base_revision = base[0] if base else 0
    base_object = base[1] if base else None
    news = remote is not None and remote[1] != base_object and remote[0] > base_revision
    local_changed = (local[1] if local else None) != base_object
    tombstones = [t for t in [("local", local_tombstone), ("remote", remote_tombstone)] if t[1] is not None]
    deletion = max(tombstones, key=lambda t: (t[1][0], t[1][2]), default=None)
    deleted = deletion[1][0] if deletion else 0  # max keeps the local one when both are equal
    behind = (remote is not None and remote[1] != base_object and not news) \
        or (remote is None and base is not None and remote_tombstone is None) \
        or (base_tombstone is not None and remote_tombstone is None)

    def reseal(version):  # the base's document again, only sealed anew (a team's key rotation)
        return base is not None and version[1] != base_object and content(version) == content(base)

    def effective(version):  # a re-seal is no edit: it counts at the base's revision
        return base_revision if reseal(version) else version[0]
    candidates = []
    if local is not None and (local_changed or not news):
        candidates.append(("local", local))
    if news and remote[1] != (local[1] if local else None):
        candidates.append(("remote", remote))
    offered = list(candidates)
    raise_local = None
    if len(candidates) == 2:  # one side re-sealed what the other edited: the edit, never joined
        if reseal(local):  # (two re-seals: the remote's)
            candidates = [candidates[1]]
        elif reseal(remote):  # this device's edit, raised above the re-seal if it is not yet
            candidates = [candidates[0]]
            if local[0] <= remote[0]:
                raise_local = remote[0] + 1
    survivors = [c for c in candidates if effective(c[1]) > deleted]
    put_back = news and not reseal(remote) and not any(side == "remote" for side, _ in survivors) \
        and remote[1] != (local[1] if local else None)
    record = {0: "absent", 1: survivors[0][0] if survivors else None, 2: "merged"}[len(survivors)]
    if record == "local" and raise_local is not None:
        record = f"local:{raise_local}"
    tombstone = deletion[0] if record == "absent" and deletion else "none"
    if record == "absent" and deletion:
        # A re-seal above the deleted revision lost only for being no edit: the deletion is
        # raised above it, so a device that holds the re-seal drops it too.
        raised = max((c[1][0] for c in offered if c[1][0] > deleted), default=None)
        if raised is not None:
            tombstone = f"raised:{raised}"
    return record, tombstone, behind, put_back


def merge_winner(a, b):
    """The conflict's winner of two versions (revision, object, modified, file hash)."""
    return max([a, b], key=lambda v: (v[0], v[2], v[3]))


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
        generation, identities, items, ledger = read_index(sys.argv[2], vault_id, vault_key)
        print(f"index generation {generation}: {len(identities)} identities, {len(items)} items, {len(ledger)} ledger entries")


# Attachments (SPEC.md §6.7)

ATTACHMENT_CHUNK = 65536


def padme(size):
    """The bucket an attachment's content is padded to: max(4096, Padmé(size))."""
    if size <= 4096:
        return 4096
    exponent = size.bit_length() - 1
    bits = exponent.bit_length()
    mask = (1 << (exponent - bits)) - 1
    return (size + mask) & ~mask


def seal_attachment(key, content):
    """An attachment file: the preamble, the secretstream header, the padded content in chunks."""
    state = sodium.crypto_secretstream_xchacha20poly1305_state()
    header = sodium.crypto_secretstream_xchacha20poly1305_init_push(state, key)
    padded = content + bytes(padme(len(content)) - len(content))
    out = preamble(0x41) + header
    for offset in range(0, len(padded), ATTACHMENT_CHUNK):
        last = offset + ATTACHMENT_CHUNK >= len(padded)
        tag = sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL if last else sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE
        out += sodium.crypto_secretstream_xchacha20poly1305_push(state, padded[offset:offset + ATTACHMENT_CHUNK], None, tag)
    return out


def open_attachment(member, data):
    """The content of an attachment file, checked in SPEC.md §6.7's order; ValueError otherwise."""
    size, key = member["size"], base64.urlsafe_b64decode(member["key"] + "==")
    padded = padme(size)
    chunks = -(-padded // ATTACHMENT_CHUNK)
    if len(data) != 32 + padded + 17 * chunks:
        raise ValueError("wrong length")
    if data[:8] != preamble(0x41):
        raise ValueError("not an attachment")
    state = sodium.crypto_secretstream_xchacha20poly1305_state()
    sodium.crypto_secretstream_xchacha20poly1305_init_pull(state, data[8:32], key)
    plain, offset = b"", 32
    for index in range(chunks):
        length = min(ATTACHMENT_CHUNK, padded - index * ATTACHMENT_CHUNK) + 17
        try:
            message, tag = sodium.crypto_secretstream_xchacha20poly1305_pull(state, data[offset:offset + length], None)
        except Exception:
            raise ValueError("chunk %d fails authentication" % index)
        final = sodium.crypto_secretstream_xchacha20poly1305_TAG_FINAL
        if (tag == final) != (index == chunks - 1) or tag not in (final, sodium.crypto_secretstream_xchacha20poly1305_TAG_MESSAGE):
            raise ValueError("chunk %d has the wrong tag" % index)
        plain += message
        offset += length
    content, padding = plain[:size], plain[size:]
    if any(padding):
        raise ValueError("padding is not zero")
    if hashlib.blake2b(content, digest_size=32).hexdigest() != member["digest"]:
        raise ValueError("digest differs")
    return content

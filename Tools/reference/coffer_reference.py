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


def preamble(type_byte):
    return PREAMBLE + bytes([type_byte, VERSION])


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


def open_record(vault_id, vault_key, record_id_hex, data):
    if data[:8] != preamble(0x52) or len(data) < 32 + BLOCK + 16 or (len(data) - 48) % BLOCK:
        raise Corrupt("not a v1 record")
    ad = preamble(0x52) + vault_id + bytes.fromhex(record_id_hex)
    try:
        padded = aead_decrypt(kdf_subkey(vault_key, SUBKEY_RECORDS), data[8:32], ad, data[32:])
    except Exception:
        raise Corrupt("authentication failed")
    doc = json.loads(unpad(padded))
    if doc.get("id") != record_id_hex:
        raise Corrupt("id does not match file name")
    return doc


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

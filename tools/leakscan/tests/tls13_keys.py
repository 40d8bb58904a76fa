#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The tests' oracle for leakscan's TLS 1.3 record keys: HKDF-Expand-Label
# of RFC 8446 7.3 written out with Python's hmac, apart from OpenSSL.
#
#   tls13_keys.py SECRET_HEX
#
# prints "FORM HEX" lines as leakscan --dump-components does: key16, key32
# and iv for a 32-byte secret (SHA-256), key32 and iv for 48 bytes (SHA-384).
import hashlib
import hmac
import sys


def expand_label(secret, label, length, hash_fn):
    full = b"tls13 " + label
    info = length.to_bytes(2, "big") + bytes([len(full)]) + full + b"\x00"
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), hash_fn).digest()
        out += block
        i += 1
    return out[:length]


def main():
    secret = bytes.fromhex(sys.argv[1])
    if len(secret) == 32:
        hash_fn, keys = hashlib.sha256, (16, 32)
    elif len(secret) == 48:
        hash_fn, keys = hashlib.sha384, (32,)
    else:
        sys.exit("tls13_keys.py: want a 32- or 48-byte secret")
    for n in keys:
        print("key%d %s" % (n, expand_label(secret, b"key", n, hash_fn).hex()))
    print("iv %s" % expand_label(secret, b"iv", 12, hash_fn).hex())


main()

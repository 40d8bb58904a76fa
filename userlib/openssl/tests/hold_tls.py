#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""hold_tls.py PORT TLS COUNT [KEYLOG]: open COUNT TLS connections to
127.0.0.1:PORT one after another (TLS is 1.2 or 1.3), make one HTTP request
on each and keep every connection that answered open until stdin closes.
With KEYLOG, their secrets go to that file (NSS key log format).

Prints "answered A refused R" once all COUNT were tried: answered means
the handshake and the request succeeded, refused means either failed
(the server's alert, a closed socket or a timeout). Every handshake checks
the server's signature; the certificate itself is not checked.
"""
import socket
import ssl
import sys


def main():
    if len(sys.argv) not in (4, 5) or sys.argv[2] not in ("1.2", "1.3"):
        sys.exit("usage: hold_tls.py PORT 1.2|1.3 COUNT [KEYLOG]")
    port, count = int(sys.argv[1]), int(sys.argv[3])
    version = ssl.TLSVersion.TLSv1_3 if sys.argv[2] == "1.3" else ssl.TLSVersion.TLSv1_2
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ctx.maximum_version = version
    if len(sys.argv) == 5:
        ctx.keylog_filename = sys.argv[4]
    held, refused = [], 0
    for _ in range(count):
        try:
            sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=20))
            sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
            if b" 200 " not in sock.recv(4096):
                raise ssl.SSLError("no 200 answer")
            held.append(sock)
        except (OSError, ssl.SSLError):
            refused += 1
    print(f"answered {len(held)} refused {refused}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()

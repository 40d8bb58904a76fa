// SPDX-License-Identifier: GPL-2.0
/* Base64 decoding of a PEM body (RFC 7468 text, no line-length rules). */
#include <ctype.h>

#include "pem.h"

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* out must hold len * 3 / 4 + 3 bytes. */
int b64_decode(const char *in, size_t len, unsigned char *out, size_t *outlen)
{
	unsigned int acc = 0;
	int bits = 0, pad = 0;
	size_t i, n = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = in[i];
		int v;

		if (isspace(c))
			continue;
		if (c == '=') {
			pad++;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad)	/* data after padding is not base64 */
			return -1;
		acc = (acc << 6) | v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[n++] = (acc >> bits) & 0xff;
		}
	}
	if (pad > 2)
		return -1;
	*outlen = n;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/* Hex decoding of secrets given as text: key log lines and --secret. */
#include "secrets.h"

static int hex_value(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_decode(const char *in, size_t len, unsigned char *out)
{
	size_t i;
	int hi, lo;

	if (len % 2)
		return -1;
	for (i = 0; i < len / 2; i++) {
		hi = hex_value(in[2 * i]);
		lo = hex_value(in[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = hi << 4 | lo;
	}
	return 0;
}

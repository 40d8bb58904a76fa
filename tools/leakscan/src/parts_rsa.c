// SPDX-License-Identifier: GPL-2.0
/* RSA private components, including every extra prime of a multi-prime key. */
#include <stdio.h>

#include <openssl/core_names.h>

#include "keyparts.h"
#include "util.h"

static int add_param(EVP_PKEY *pkey, struct keyinfo *ki, const char *param,
		     const char *name)
{
	BIGNUM *bn = NULL;

	if (!EVP_PKEY_get_bn_param(pkey, param, &bn))
		return 0;
	key_add_bn(ki, name, bn);
	BN_clear_free(bn);
	return 1;
}

/* Extra primes are factor3.., their exponents exponent3.., coefficients coefficient2.. */
static int add_extra(EVP_PKEY *pkey, struct keyinfo *ki)
{
	char param[40], name[24];
	int i, n = 0;

	for (i = 3; i <= 10; i++) {
		snprintf(param, sizeof(param), "rsa-factor%d", i);
		snprintf(name, sizeof(name), "factor%d", i);
		if (!add_param(pkey, ki, param, name))
			break;
		snprintf(param, sizeof(param), "rsa-exponent%d", i);
		snprintf(name, sizeof(name), "exponent%d", i);
		n += 1 + add_param(pkey, ki, param, name);
		snprintf(param, sizeof(param), "rsa-coefficient%d", i - 1);
		snprintf(name, sizeof(name), "coefficient%d", i - 1);
		n += add_param(pkey, ki, param, name);
	}
	return n;
}

int key_parts_rsa(EVP_PKEY *pkey, struct keyinfo *ki)
{
	static const struct {
		const char *param, *name;
	} base[] = {
		{ OSSL_PKEY_PARAM_RSA_D, "d" },
		{ OSSL_PKEY_PARAM_RSA_FACTOR1, "p" },
		{ OSSL_PKEY_PARAM_RSA_FACTOR2, "q" },
		{ OSSL_PKEY_PARAM_RSA_EXPONENT1, "dP" },
		{ OSSL_PKEY_PARAM_RSA_EXPONENT2, "dQ" },
		{ OSSL_PKEY_PARAM_RSA_COEFFICIENT1, "qInv" },
	};
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(base); i++)
		n += add_param(pkey, ki, base[i].param, base[i].name);
	if (!n)
		return -1;	/* a public key, or no private half */
	return n + add_extra(pkey, ki);
}

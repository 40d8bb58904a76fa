/* SPDX-License-Identifier: GPL-2.0 */
/* Internal to the key loader: how each key type is taken apart. */
#ifndef LEAKSCAN_KEYPARTS_H
#define LEAKSCAN_KEYPARTS_H

#include <openssl/bn.h>
#include <openssl/evp.h>

#include "key.h"

void key_add_bn(struct keyinfo *ki, const char *name, const BIGNUM *bn);

/* Each returns the number of components added, or -1 on an OpenSSL error. */
int key_parts_rsa(EVP_PKEY *pkey, struct keyinfo *ki);
int key_parts_priv_bn(EVP_PKEY *pkey, struct keyinfo *ki);
int key_parts_ecx(EVP_PKEY *pkey, struct keyinfo *ki);
int key_parts_pq(EVP_PKEY *pkey, struct keyinfo *ki);

/* ML-KEM, ML-DSA or SLH-DSA (OpenSSL 3.5 and later). */
int key_is_pq(EVP_PKEY *pkey);

#endif

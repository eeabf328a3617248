#ifndef HAUL_CCRYPTO_SHIM_H
#define HAUL_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

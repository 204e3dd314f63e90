#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/rsa.h>
#include <openssl/bn.h>

/* Initializes OpenSSL without the clean-up it otherwise registers with atexit: threads that still hold connections
   when the process ends (an SSH session closed by a connection pool's thread) would use it torn down. Only the first
   initialization decides, so this must come before any other use. */
static inline int llvs_openssl_init_without_exit_cleanup(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

/* SHA-256 of a buffer through the low-level interface. OpenSSL 3's one-shot SHA256() fetches the algorithm from the
   provider on every call, about 8 times the cost of hashing a value ID; the map hashes one per key it places. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline void llvs_sha256(const void *data, size_t count, unsigned char *digest) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, data, count);
    SHA256_Final(digest, &context);
}
#pragma clang diagnostic pop

/* Umbrella header for OpenSSL as seen from Swift. Function-like macros cannot be called from
 * Swift, so the few we need are wrapped in static inline functions here. */
#ifndef SWIFTPUSH_OPENSSL_H
#define SWIFTPUSH_OPENSSL_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

static inline long swiftpush_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long swiftpush_ssl_set_sni(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline long swiftpush_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long swiftpush_ssl_ctx_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}
static inline int swiftpush_ssl_mode_partial_write(void) { return SSL_MODE_ENABLE_PARTIAL_WRITE; }
static inline int swiftpush_ssl_mode_moving_buffer(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline int swiftpush_ssl_mode_release_buffers(void) { return SSL_MODE_RELEASE_BUFFERS; }
static inline long swiftpush_ssl_ctx_add0_chain_cert(SSL_CTX *ctx, X509 *x509) {
    return SSL_CTX_add0_chain_cert(ctx, x509);
}
/* True when the first queued error is OpenSSL 3's "unexpected eof while reading": the peer
 * hung up, which is a connection problem, not a TLS one. */
static inline int swiftpush_err_is_unexpected_eof(void) {
    unsigned long e = ERR_peek_error();
    return e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}
static inline void swiftpush_openssl_free(void *p) { OPENSSL_free(p); }
#endif

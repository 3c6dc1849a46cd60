// libnghttp2 (client sessions) and OpenSSL (TLS) for RelayHTTP2's nghttp2 backend, with typed wrappers for the
// OpenSSL macros Swift cannot import. Every symbol is prefixed `relay_` because C has one namespace.
#ifndef RELAY_NGHTTP2_SHIM_H
#define RELAY_NGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

// MARK: - OpenSSL macros

/// `SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)`: APNs requires TLS 1.2 or later.
static inline int relay_ssl_ctx_require_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

/// Non-blocking writes may complete partly and be retried from a buffer that moved (PROTOCOLS.md §7).
static inline void relay_ssl_ctx_allow_partial_writes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

/// `SSL_CTX_set_read_ahead(ctx, 1)`: each socket read takes whatever the kernel holds, up to OpenSSL's read buffer,
/// instead of a record's 5-byte header and then its body (two read(2) calls per TLS record without it).
static inline void relay_ssl_ctx_read_ahead(SSL_CTX *ctx) {
    SSL_CTX_set_read_ahead(ctx, 1);
}

/// `SSL_set_tlsext_host_name`: the SNI server name (never an IP literal).
static inline int relay_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The peer's certificate must match an IP address literal (SSL_set1_host takes DNS names).
static inline int relay_ssl_set_expected_ip(SSL *ssl, const char *address) {
    return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), address);
}

// MARK: - nghttp2 constants Swift imports awkwardly

/// `NGHTTP2_INITIAL_WINDOW_SIZE`-style settings entries, built in C so Swift need not spell the enum casts.
static inline int relay_nghttp2_submit_client_settings(nghttp2_session *session, uint32_t stream_window) {
    nghttp2_settings_entry entries[2] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, stream_window},
    };
    return nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, entries, 2);
}

// MARK: - epoll

// `struct epoll_event` is packed on x86_64, which Swift does not import reliably: these take and return its two
// fields separately.
static const uint32_t relay_epoll_in = EPOLLIN;
static const uint32_t relay_epoll_out = EPOLLOUT;
static const uint32_t relay_epoll_err = EPOLLERR;
static const uint32_t relay_epoll_hup = EPOLLHUP;

static inline int relay_epoll_control(int epfd, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = token;
    return epoll_ctl(epfd, operation, fd, &event);
}

/// Waits for up to `capacity` (at most 256) events, writing each one's token and flags.
static inline int relay_epoll_wait(int epfd, uint64_t *tokens, uint32_t *flags, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    int count = epoll_wait(epfd, events, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = events[i].data.u64;
        flags[i] = events[i].events;
    }
    return count;
}

#endif

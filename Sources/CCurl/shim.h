// Typed wrappers for libcurl's variadic functions, which Swift cannot call, and for macros it cannot import.
// Every symbol is prefixed `relay_curl_` because C has one namespace.
#ifndef RELAY_CURL_SHIM_H
#define RELAY_CURL_SHIM_H

#include <curl/curl.h>

/// A write or header callback: `size * count` bytes at `data`; returning fewer aborts the transfer.
typedef size_t (*relay_curl_data_fn)(char *data, size_t size, size_t count, void *context);
/// CURLOPT_OPENSOCKETFUNCTION's callback.
typedef curl_socket_t (*relay_curl_opensocket_fn)(void *context, curlsocktype purpose, struct curl_sockaddr *address);
/// CURLOPT_CLOSESOCKETFUNCTION's callback.
typedef int (*relay_curl_closesocket_fn)(void *context, curl_socket_t socket);

// MARK: - Version

/// `curl_version_info(CURLVERSION_NOW)`: the macro alias is not imported into Swift.
static inline const curl_version_info_data *relay_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

/// Whether the linked libcurl was built with HTTP/2 (nghttp2).
static inline int relay_curl_supports_http2(void) {
    return (relay_curl_version_info()->features & CURL_VERSION_HTTP2) != 0;
}

/// Whether the linked libcurl is thread safe (`curl_global_init` may be called from any thread).
static inline int relay_curl_is_threadsafe(void) {
    return (relay_curl_version_info()->features & CURL_VERSION_THREADSAFE) != 0;
}

/// The socket value meaning "no socket" (`CURL_SOCKET_BAD`, a macro).
static inline curl_socket_t relay_curl_socket_bad(void) { return CURL_SOCKET_BAD; }

// MARK: - Easy handles

static inline CURLcode relay_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_data_fn(CURL *handle, CURLoption option, relay_curl_data_fn value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode relay_curl_easy_setopt_opensocket_fn(CURL *handle, relay_curl_opensocket_fn value) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, value);
}
static inline CURLcode relay_curl_easy_setopt_closesocket_fn(CURL *handle, relay_curl_closesocket_fn value) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, value);
}
static inline CURLcode relay_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}
static inline CURLcode relay_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}

// MARK: - Multi handles

static inline CURLMcode relay_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// The easy handle and result of a `CURLMSG_DONE` message (the result sits in a union Swift cannot read safely).
static inline int relay_curl_msg_done(CURLMsg *message, CURL **handle, CURLcode *result) {
    if (message->msg != CURLMSG_DONE) return 0;
    *handle = message->easy_handle;
    *result = message->data.result;
    return 1;
}

#endif

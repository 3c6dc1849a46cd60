// Typed wrappers for libcurl's variadic functions, which Swift cannot call.
// Every symbol is prefixed `relay_curl_` because C has one namespace.
#ifndef RELAY_CURL_SHIM_H
#define RELAY_CURL_SHIM_H

#include <curl/curl.h>

/// `curl_version_info(CURLVERSION_NOW)`: the macro alias is not imported into Swift.
static inline const curl_version_info_data *relay_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

/// Whether the linked libcurl was built with HTTP/2 (nghttp2).
static inline int relay_curl_supports_http2(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return (info->features & CURL_VERSION_HTTP2) != 0;
}

/// Whether the linked libcurl is thread safe (`curl_global_init` may be called from any thread).
static inline int relay_curl_is_threadsafe(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return (info->features & CURL_VERSION_THREADSAFE) != 0;
}

#endif

// Typed entry points to libcurl for Swift, which cannot call C variadic functions (curl_easy_setopt and friends).
#ifndef STORERECON_CCURL_H
#define STORERECON_CCURL_H

#include <curl/curl.h>

/// A write or header callback: receives `size * count` bytes, returns how many it took (fewer aborts the transfer).
typedef size_t (*storerecon_curl_data_callback)(char *bytes, size_t size, size_t count, void *context);

/// curl_global_init(CURL_GLOBAL_DEFAULT).
CURLcode storerecon_curl_global_init(void);

CURLcode storerecon_curl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode storerecon_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode storerecon_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode storerecon_curl_easy_setopt_callback(
    CURL *handle, CURLoption option, storerecon_curl_data_callback callback);

CURLcode storerecon_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode storerecon_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);

CURLMcode storerecon_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

#endif

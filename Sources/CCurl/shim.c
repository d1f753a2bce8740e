#define CURL_DISABLE_TYPECHECK 1
#include "CCurl.h"

CURLcode storerecon_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

CURLcode storerecon_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storerecon_curl_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storerecon_curl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode storerecon_curl_easy_setopt_callback(
    CURL *handle, CURLoption option, storerecon_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode storerecon_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode storerecon_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode storerecon_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

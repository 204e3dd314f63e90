#ifndef LLVS_CCURL_SHIM_H
#define LLVS_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic C functions, which Swift cannot call.
// These typed wrappers pass each argument kind through unchanged.

static inline CURLcode llvs_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode llvs_curl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode llvs_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode llvs_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode llvs_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode llvs_curl_easy_setopt_write_callback(CURL *handle, CURLoption option,
                                                            size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, callback);
}
static inline CURLcode llvs_curl_easy_setopt_xferinfo_callback(CURL *handle,
        int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode llvs_curl_easy_setopt_seek_callback(CURL *handle, int (*callback)(void *, curl_off_t, int)) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}
static inline CURLcode llvs_curl_easy_setopt_sshkey_callback(CURL *handle,
        int (*callback)(CURL *, const struct curl_khkey *, const struct curl_khkey *, enum curl_khmatch, void *)) {
    return curl_easy_setopt(handle, CURLOPT_SSH_KEYFUNCTION, callback);
}
static inline CURLcode llvs_curl_easy_setopt_prereq_callback(CURL *handle,
        int (*callback)(void *, char *, char *, int, int)) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}
static inline CURLcode llvs_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode llvs_curl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode llvs_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode llvs_curl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode llvs_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

#endif

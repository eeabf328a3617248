#ifndef HAUL_CCURL_SHIM_H
#define HAUL_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift
   cannot call; these typed wrappers are the only way Haul reaches them. */

static inline CURLcode haul_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode haul_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode haul_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode haul_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode haul_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode haul_easy_setopt_mime(CURL *h, curl_mime *v) { return curl_easy_setopt(h, CURLOPT_MIMEPOST, v); }

typedef size_t (*haul_data_callback)(char *, size_t, size_t, void *);
typedef int (*haul_xferinfo_callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
typedef int (*haul_seek_callback)(void *, curl_off_t, int);

static inline CURLcode haul_easy_setopt_write_function(CURL *h, haul_data_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode haul_easy_setopt_header_function(CURL *h, haul_data_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode haul_easy_setopt_read_function(CURL *h, haul_data_callback f) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, f); }
static inline CURLcode haul_easy_setopt_seek_function(CURL *h, haul_seek_callback f) { return curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, f); }
static inline CURLcode haul_easy_setopt_xferinfo_function(CURL *h, haul_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }

static inline CURLcode haul_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode haul_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode haul_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode haul_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode haul_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/* Values that are macros or enum members Swift may import awkwardly. */
static inline long haul_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline long haul_writefunc_error(void) { return 0; }
static inline long haul_global_all(void) { return CURL_GLOBAL_ALL; }
static inline long haul_seekfunc_ok(void) { return CURL_SEEKFUNC_OK; }
static inline long haul_seekfunc_fail(void) { return CURL_SEEKFUNC_FAIL; }
#endif

#ifndef HAUL_CCURL_SHIM_H
#define HAUL_CCURL_SHIM_H
#include <curl/curl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

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

typedef curl_socket_t (*haul_opensocket_callback)(void *, curlsocktype, struct curl_sockaddr *);
static inline CURLcode haul_easy_setopt_opensocket_function(CURL *h, haul_opensocket_callback f) { return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f); }
static inline curl_socket_t haul_socket_bad(void) { return CURL_SOCKET_BAD; }

/* The peer address libcurl is about to connect to: copies its 4 (IPv4) or 16 (IPv6) bytes
   into out and returns how many, or 0 for another family (a Unix socket). */
static inline int haul_sockaddr_bytes(const struct curl_sockaddr *a, unsigned char out[16]) {
    if (a->family == AF_INET && a->addrlen >= sizeof(struct sockaddr_in)) {
        memcpy(out, &((const struct sockaddr_in *)&a->addr)->sin_addr, 4);
        return 4;
    }
    if (a->family == AF_INET6 && a->addrlen >= sizeof(struct sockaddr_in6)) {
        memcpy(out, &((const struct sockaddr_in6 *)&a->addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

static inline CURLMcode haul_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

/* Values that are macros or enum members Swift may import awkwardly. */
static inline long haul_readfunc_abort(void) { return CURL_READFUNC_ABORT; }
static inline long haul_writefunc_error(void) { return 0; }
static inline long haul_global_all(void) { return CURL_GLOBAL_ALL; }
static inline long haul_seekfunc_ok(void) { return CURL_SEEKFUNC_OK; }
static inline long haul_seekfunc_fail(void) { return CURL_SEEKFUNC_FAIL; }
#endif

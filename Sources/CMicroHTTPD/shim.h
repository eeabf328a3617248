#ifndef HAUL_CMICROHTTPD_SHIM_H
#define HAUL_CMICROHTTPD_SHIM_H
// libmicrohttpd for HaulMetrics. Swift cannot call the variadic MHD_start_daemon nor see
// the HTTP status macros, so the few calls HaulMetrics needs are wrapped here.
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

static const unsigned int HAUL_MHD_HTTP_OK = MHD_HTTP_OK;
static const unsigned int HAUL_MHD_HTTP_NOT_FOUND = MHD_HTTP_NOT_FOUND;
static const unsigned int HAUL_MHD_HTTP_METHOD_NOT_ALLOWED = MHD_HTTP_METHOD_NOT_ALLOWED;
static const unsigned int HAUL_MHD_HTTP_SERVICE_UNAVAILABLE = MHD_HTTP_SERVICE_UNAVAILABLE;

/// Starts a daemon that polls on an internal thread and answers from a pool of `threads`
/// threads, listening only on `address` (a `struct sockaddr_in`, or a `struct sockaddr_in6`
/// when `ipv6` is non-zero). Returns NULL when it cannot start (address in use, no threads).
static inline struct MHD_Daemon *haul_mhd_start(const struct sockaddr *address, int ipv6,
                                                unsigned int threads, unsigned int timeout_seconds,
                                                unsigned int connection_limit,
                                                MHD_AccessHandlerCallback handler, void *context) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (ipv6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_END);
}

/// Queues a complete response (the body is copied) with a Content-Type and, when `allow`
/// is not NULL, an Allow header. Returns MHD_NO when the connection should be closed.
static inline enum MHD_Result haul_mhd_respond(struct MHD_Connection *connection, unsigned int status,
                                               const char *content_type, const char *allow,
                                               const void *body, size_t length) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (allow != NULL) MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

#endif

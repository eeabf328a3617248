#ifndef HAUL_CMICROHTTPD_SHIM_H
#define HAUL_CMICROHTTPD_SHIM_H
// libmicrohttpd for HaulMetrics' HTTPServer. Swift cannot call the variadic MHD_start_daemon
// nor see the HTTP status macros, so the few calls the server needs are wrapped here, with the
// collection of request bodies (which arrive in pieces over several callbacks).
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

static const unsigned int HAUL_MHD_HTTP_OK = MHD_HTTP_OK;
static const unsigned int HAUL_MHD_HTTP_NOT_FOUND = MHD_HTTP_NOT_FOUND;
static const unsigned int HAUL_MHD_HTTP_METHOD_NOT_ALLOWED = MHD_HTTP_METHOD_NOT_ALLOWED;
static const unsigned int HAUL_MHD_HTTP_SERVICE_UNAVAILABLE = MHD_HTTP_SERVICE_UNAVAILABLE;

/// Called once per request when its whole body has arrived (`body` is NULL when there is none;
/// `too_large` is non-zero when it passed the server's limit and was dropped).
typedef enum MHD_Result (*haul_mhd_handler)(void *context, struct MHD_Connection *connection, const char *url,
                                            const char *method, const char *body, size_t length, int too_large);

/// What happened to a connection, for the server's guard against slow clients.
enum haul_mhd_event_kind {
    /// Accepted (`address` is the client's).
    HAUL_MHD_OPENED = 0,
    /// Closed by either side.
    HAUL_MHD_CLOSED = 1,
    /// Its request has fully arrived (head and body) and is handed to the handler.
    HAUL_MHD_ANSWERING = 2,
    /// Its request ended: the connection now waits for the next one.
    HAUL_MHD_ANSWERED = 3,
};

/// Called on each event of a connection, identified by its socket.
typedef void (*haul_mhd_event)(void *context, int kind, int socket, const struct sockaddr *address);

/// What the daemon's callbacks share: the Swift handler and event callback, their context and the body limit.
struct haul_mhd_server {
    haul_mhd_handler handler;
    haul_mhd_event event;
    void *context;
    size_t max_body;
};

/// The socket of a connection, or -1.
static inline int haul_mhd_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// The client's address (`struct sockaddr_in` or `sockaddr_in6`), or NULL.
static inline const struct sockaddr *haul_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/// Reports a connection's start and end; its socket is kept in `socket_context` (plus one)
/// because libmicrohttpd closes the socket only after reporting the end.
static inline void haul_mhd_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                                   enum MHD_ConnectionNotificationCode code) {
    struct haul_mhd_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        int socket = haul_mhd_socket(connection);
        *socket_context = (void *)(intptr_t)(socket + 1);
        server->event(server->context, HAUL_MHD_OPENED, socket, haul_mhd_client_address(connection));
    } else if (*socket_context != NULL) {
        server->event(server->context, HAUL_MHD_CLOSED, (int)((intptr_t)*socket_context - 1), NULL);
        *socket_context = NULL;
    }
}

/// One request's body as it arrives.
struct haul_mhd_request {
    char *body;
    size_t length;
    int too_large;
};

static inline enum MHD_Result haul_mhd_access(void *cls, struct MHD_Connection *connection, const char *url,
                                              const char *method, const char *version, const char *upload_data,
                                              size_t *upload_data_size, void **request_context) {
    (void)version;
    struct haul_mhd_server *server = cls;
    struct haul_mhd_request *request = *request_context;
    if (request == NULL) {
        request = calloc(1, sizeof *request);
        if (request == NULL) return MHD_NO;
        *request_context = request;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        size_t more = *upload_data_size;
        if (!request->too_large && request->length + more > server->max_body) {
            request->too_large = 1;
        } else if (!request->too_large) {
            char *grown = realloc(request->body, request->length + more);
            if (grown == NULL) return MHD_NO;
            memcpy(grown + request->length, upload_data, more);
            request->body = grown;
            request->length += more;
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    server->event(server->context, HAUL_MHD_ANSWERING, haul_mhd_socket(connection), NULL);
    return server->handler(server->context, connection, url, method, request->body, request->length, request->too_large);
}

static inline void haul_mhd_completed(void *cls, struct MHD_Connection *connection, void **request_context,
                                      enum MHD_RequestTerminationCode code) {
    (void)code;
    struct haul_mhd_server *server = cls;
    server->event(server->context, HAUL_MHD_ANSWERED, haul_mhd_socket(connection), NULL);
    struct haul_mhd_request *request = *request_context;
    if (request == NULL) return;
    free(request->body);
    free(request);
    *request_context = NULL;
}

/// Starts a daemon that polls on an internal thread and answers from a pool of `threads`
/// threads, listening only on `address` (a `struct sockaddr_in`, or a `struct sockaddr_in6`
/// when `ipv6` is non-zero), calling `handler` once per complete request and `event` on each
/// connection event. It holds at most `connection_limit` connections. `*server` receives
/// the callbacks' shared state, to be freed with `haul_mhd_stop`. Returns NULL when it cannot
/// start (address in use, no threads).
static inline struct MHD_Daemon *haul_mhd_start(const struct sockaddr *address, int ipv6,
                                                unsigned int threads, unsigned int timeout_seconds,
                                                unsigned int connection_limit, size_t max_body,
                                                haul_mhd_handler handler, haul_mhd_event event, void *context,
                                                struct haul_mhd_server **server) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
    if (ipv6) flags |= MHD_USE_IPv6;
    struct haul_mhd_server *shared = malloc(sizeof *shared);
    if (shared == NULL) return NULL;
    shared->handler = handler;
    shared->event = event;
    shared->context = context;
    shared->max_body = max_body;
    struct MHD_Daemon *daemon = MHD_start_daemon(flags, 0, NULL, NULL, haul_mhd_access, shared,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_THREAD_POOL_SIZE, threads,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, haul_mhd_completed, shared,
                            MHD_OPTION_NOTIFY_CONNECTION, haul_mhd_notify, shared,
                            MHD_OPTION_END);
    if (daemon == NULL) { free(shared); return NULL; }
    *server = shared;
    return daemon;
}

/// Stops a daemon started by `haul_mhd_start` (waiting for its threads) and frees its state.
static inline void haul_mhd_stop(struct MHD_Daemon *daemon, struct haul_mhd_server *server) {
    MHD_stop_daemon(daemon);
    free(server);
}

/// The request's header fields (`headers` non-zero) or query arguments, one `iterator` call each.
static inline int haul_mhd_values(struct MHD_Connection *connection, int headers, MHD_KeyValueIterator iterator, void *context) {
    return MHD_get_connection_values(connection, headers ? MHD_HEADER_KIND : MHD_GET_ARGUMENT_KIND, iterator, context);
}

/// Queues a complete response (the body is copied) with `count` header fields.
/// Returns MHD_NO when the connection should be closed.
static inline enum MHD_Result haul_mhd_respond(struct MHD_Connection *connection, unsigned int status,
                                               const char *const *names, const char *const *values, size_t count,
                                               const void *body, size_t length) {
    struct MHD_Response *response =
        MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (response == NULL) return MHD_NO;
    for (size_t i = 0; i < count; i++) MHD_add_response_header(response, names[i], values[i]);
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

#endif

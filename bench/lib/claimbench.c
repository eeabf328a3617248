/* claimbench: drives Haul's claim + complete SQL (copied verbatim from
 * Sources/HaulQueue/HostLimits.swift lockBusiestCandidate/freeSlots and
 * Sources/HaulQueue/SegmentLeases.swift claim/complete, sent with PQexecParams like
 * HaulPostgres does), or a minimal raw SKIP LOCKED claim + complete, from N threads.
 *
 *   claimbench throughput haul|raw CONNINFO CLIENTS SECONDS
 *       prints: ops=<completed claim+complete pairs> empty=<claims that got nothing> secs=<s> ops_per_s=<x>
 *   claimbench explain CONNINFO   (EXPLAIN ANALYZE of the three claim statements, rolled back)
 *   claimbench latency CONNINFO CLAIMS
 *       one client; times each Haul claim transaction (BEGIN..COMMIT), completes the segment
 *       (untimed); prints p50_ms p90_ms p99_ms mean_ms
 * Build: cc -O2 -o claimbench claimbench.c -I$(pg_config --includedir) -lpq -lpthread
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- verbatim from HostLimits.lockBusiestCandidate ---- */
static const char *LOCK_HOST =
"SELECT h.host, coalesce(h.max_running, (SELECT max_running FROM origin_hosts WHERE host = '*'), $3) AS max_running\n"
"FROM (\n"
"    SELECT c.host, max(c.priority) AS priority, min(c.id) AS first FROM (\n"
"        SELECT s.host, s.priority, s.id FROM segments s\n"
"        JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation\n"
"        WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND (t.owner IS NULL OR t.owner = $1) AND s.host <> ALL($2::text[])\n"
"        ORDER BY s.priority DESC, s.id LIMIT 500\n"
"    ) c GROUP BY c.host\n"
") candidates\n"
"JOIN origin_hosts h ON h.host = candidates.host\n"
"ORDER BY candidates.priority DESC, candidates.first\n"
"LIMIT 1\n"
"FOR UPDATE OF h SKIP LOCKED";
/* ---- verbatim from HostLimits.freeSlots ---- */
static const char *FREE_SLOTS = "SELECT count(*) AS n FROM segments WHERE state = 'running' AND host = $1";
/* ---- verbatim from SegmentLeases.claim(limit:host:lease:), RETURNING = ClaimedSegment.returning ---- */
static const char *CLAIM =
"WITH picked AS MATERIALIZED (\n"
"    SELECT s.id FROM segments s\n"
"    JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation\n"
"    WHERE s.state = 'queued' AND s.host = $4 AND s.next_attempt_at <= now() AND (t.owner IS NULL OR t.owner = $3)\n"
"    ORDER BY s.priority DESC, s.id\n"
"    LIMIT $1\n"
"    FOR UPDATE OF s SKIP LOCKED\n"
")\n"
"UPDATE segments s SET state = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() + make_interval(secs => $2),\n"
"       worker_id = $3, attempts = s.attempts + 1, updated_at = now()\n"
"FROM picked, transfers t\n"
"WHERE s.id = picked.id AND t.id = s.transfer_id\n"
"RETURNING s.id, s.transfer_id, s.idx, s.generation, s.byte_offset, s.length, s.bytes_done, s.lease_token::text AS lease_token, s.attempts,\n"
"    t.url, t.dest, t.size, t.etag, t.last_modified, t.accepts_ranges, t.layout, t.headers::text AS headers, t.options::text AS options,\n"
"    t.segment_size, t.expected_digest, t.priority";
/* ---- verbatim from SegmentLeases.complete ---- */
static const char *COMPLETE =
"UPDATE segments SET state = 'done', bytes_done = $3, length = coalesce(length, $3), lease_token = NULL, lease_expires_at = NULL,\n"
"       last_error = NULL, updated_at = now()\n"
"WHERE id = $1 AND lease_token = $2::uuid AND state = 'running'";
static const char *MOVE_TRANSFER =
"UPDATE transfers SET state = 'finalizing', size = coalesce(size, $3), lease_token = NULL, updated_at = now()\n"
"WHERE id = $1 AND state = 'downloading' AND generation = $2\n"
"  AND NOT EXISTS (SELECT 1 FROM segments WHERE transfer_id = $1 AND generation = $2 AND state <> 'done')";

/* ---- raw minimal SKIP LOCKED claim + complete (same as bench/lib/raw.sql for pgbench) ---- */
static const char *RAW_CLAIM =
"UPDATE segments SET state = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() + interval '30 seconds', worker_id = $1, attempts = attempts + 1\n"
"WHERE id = (SELECT id FROM segments WHERE state = 'queued' ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)\n"
"RETURNING id, lease_token::text, length";
static const char *RAW_COMPLETE =
"UPDATE segments SET state = 'done', bytes_done = length, lease_token = NULL WHERE id = $1 AND lease_token = $2::uuid";

static const char *conninfo;
static int seconds;
static volatile int stop_flag;

static double now_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }

static PGresult *q(PGconn *c, const char *sql, int n, const char *const *p, int want) {
    PGresult *r = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        fprintf(stderr, "claimbench: %s\n  in: %.80s\n", PQerrorMessage(c), sql);
        exit(1);
    }
    (void)want;
    return r;
}
static void x(PGconn *c, const char *sql) { PQclear(q(c, sql, 0, NULL, 0)); }

/* Haul's claim(limit: 1): returns 1 and fills id/token/transfer/gen/len if a segment was claimed. */
static int haul_claim(PGconn *c, const char *worker, char *id, char *tok, char *tid, char *gen, char *len) {
    int got = 0;
    x(c, "BEGIN");
    char skipped[4096] = "{}";
    for (int attempt = 0; attempt < 4 && !got; attempt++) {
        const char *p1[] = {worker, skipped, "8"};
        PGresult *r = q(c, LOCK_HOST, 3, p1, 1);
        if (PQntuples(r) == 0) { PQclear(r); break; }
        char host[256]; snprintf(host, sizeof host, "%s", PQgetvalue(r, 0, 0));
        int max = atoi(PQgetvalue(r, 0, 1)); PQclear(r);
        const char *p2[] = {host};
        r = q(c, FREE_SLOTS, 1, p2, 1);
        int free_ = max - atoi(PQgetvalue(r, 0, 0)); PQclear(r);
        if (free_ <= 0) {   /* same as Swift: skipped.append(host) */
            size_t l = strlen(skipped); skipped[l - 1] = 0;
            snprintf(skipped + l - 1, sizeof skipped - l, "%s\"%s\"}", l > 2 ? "," : "", host);
            continue;
        }
        const char *p3[] = {"1", "30", worker, host};
        r = q(c, CLAIM, 4, p3, 1);
        if (PQntuples(r) > 0) {
            strcpy(id, PQgetvalue(r, 0, 0)); strcpy(tid, PQgetvalue(r, 0, 1)); strcpy(gen, PQgetvalue(r, 0, 3));
            strcpy(len, PQgetvalue(r, 0, 5)); strcpy(tok, PQgetvalue(r, 0, 7)); got = 1;
        }
        PQclear(r);
        break;
    }
    x(c, "COMMIT");
    return got;
}

static void haul_complete(PGconn *c, const char *id, const char *tok, const char *tid, const char *gen, const char *len) {
    x(c, "BEGIN");
    const char *p[] = {id, tok, len};
    PGresult *r = q(c, COMPLETE, 3, p, 0);
    int n = atoi(PQcmdTuples(r)); PQclear(r);
    x(c, "COMMIT");
    if (n != 1) { fprintf(stderr, "claimbench: lease lost?\n"); exit(1); }
    const char *p2[] = {tid, gen, NULL};   /* length known: size param is NULL, as in Swift */
    r = q(c, MOVE_TRANSFER, 3, p2, 0);
    int moved = atoi(PQcmdTuples(r)); PQclear(r);
    if (moved == 1) x(c, "NOTIFY haul_work");
}

struct worker_arg { int idx; int raw; long ops, empty; };

static void *run(void *a_) {
    struct worker_arg *a = a_;
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "claimbench: %s", PQerrorMessage(c)); exit(1); }
    char worker[64]; snprintf(worker, sizeof worker, "bench-%d", a->idx);
    char id[32], tok[64], tid[32], gen[16], len[32];
    while (!stop_flag) {
        if (a->raw) {
            const char *p[] = {worker};
            PGresult *r = q(c, RAW_CLAIM, 1, p, 1);
            if (PQntuples(r) == 0) { PQclear(r); a->empty++; continue; }
            strcpy(id, PQgetvalue(r, 0, 0)); strcpy(tok, PQgetvalue(r, 0, 1)); PQclear(r);
            const char *p2[] = {id, tok};
            PQclear(q(c, RAW_COMPLETE, 2, p2, 0));
        } else {
            if (!haul_claim(c, worker, id, tok, tid, gen, len)) { a->empty++; continue; }
            haul_complete(c, id, tok, tid, gen, len);
        }
        a->ops++;
    }
    PQfinish(c);
    return NULL;
}

static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
    if (argc >= 6 && !strcmp(argv[1], "throughput")) {
        int raw = !strcmp(argv[2], "raw"); conninfo = argv[3];
        int n = atoi(argv[4]); seconds = atoi(argv[5]);
        pthread_t th[256]; struct worker_arg args[256] = {0};
        double t0 = now_s();
        for (int i = 0; i < n; i++) { args[i].idx = i; args[i].raw = raw; pthread_create(&th[i], NULL, run, &args[i]); }
        struct timespec d = {seconds, 0}; nanosleep(&d, NULL);
        stop_flag = 1;
        long ops = 0, empty = 0;
        for (int i = 0; i < n; i++) { pthread_join(th[i], NULL); ops += args[i].ops; empty += args[i].empty; }
        double secs = now_s() - t0;
        printf("ops=%ld empty=%ld secs=%.2f ops_per_s=%.1f\n", ops, empty, secs, ops / secs);
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "latency")) {
        conninfo = argv[2]; int n = atoi(argv[3]);
        PGconn *c = PQconnectdb(conninfo);
        if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "claimbench: %s", PQerrorMessage(c)); return 1; }
        double *lat = calloc(n, sizeof *lat);
        char id[32], tok[64], tid[32], gen[16], len[32];
        int got = 0;
        for (int i = 0; i < n; i++) {
            double t0 = now_s();
            if (!haul_claim(c, "bench-lat", id, tok, tid, gen, len)) { fprintf(stderr, "claimbench: queue empty after %d\n", i); break; }
            lat[got++] = (now_s() - t0) * 1000;
            haul_complete(c, id, tok, tid, gen, len);
        }
        qsort(lat, got, sizeof *lat, cmp);
        double sum = 0; for (int i = 0; i < got; i++) sum += lat[i];
        printf("n=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f mean_ms=%.3f\n", got, lat[got / 2], lat[got * 9 / 10], lat[got * 99 / 100], sum / got);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "explain")) {   /* EXPLAIN ANALYZE of Haul's claim statements, rolled back */
        PGconn *c = PQconnectdb(argv[2]);
        if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "claimbench: %s", PQerrorMessage(c)); return 1; }
        x(c, "BEGIN");
        const char *stmts[] = {LOCK_HOST, FREE_SLOTS, CLAIM};
        const char *names[] = {"HostLimits.lockBusiestCandidate", "HostLimits.freeSlots", "SegmentLeases.claim"};
        const char *p1[] = {"bench-explain", "{}", "8"};
        PGresult *r = q(c, LOCK_HOST, 3, p1, 1);
        char host[256]; snprintf(host, sizeof host, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "none"); PQclear(r);
        const char *p2[] = {host};
        const char *p3[] = {"1", "30", "bench-explain", host};
        const char *const *ps[] = {p1, p2, p3}; int ns[] = {3, 1, 4};
        for (int i = 0; i < 3; i++) {
            char sql[8192]; snprintf(sql, sizeof sql, "EXPLAIN (ANALYZE, BUFFERS) %s", stmts[i]);
            r = q(c, sql, ns[i], ps[i], 1);
            printf("-- %s\n", names[i]);
            for (int k = 0; k < PQntuples(r); k++) printf("%s\n", PQgetvalue(r, k, 0));
            PQclear(r);
        }
        x(c, "ROLLBACK");
        return 0;
    }
    fprintf(stderr, "usage: claimbench throughput haul|raw CONNINFO CLIENTS SECONDS | latency CONNINFO CLAIMS\n");
    return 2;
}

/* claimbench: the minimal raw SKIP LOCKED claim + complete (the same statements as
 * bench/lib/raw.sql for pgbench), sent with PQexecParams like HaulPostgres does, from N
 * threads: the reference that Haul's own claim (haul-bench, which runs HaulQueue's code) is
 * compared with, from a C client so that client differences are ruled out.
 *
 *   claimbench throughput raw CONNINFO CLIENTS SECONDS
 *       prints: ops=<completed claim+complete pairs> empty=<claims that got nothing> secs=<s> ops_per_s=<x>
 * Build: cc -O2 -o claimbench claimbench.c -I$(pg_config --includedir) -lpq -lpthread
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

struct worker_arg { int idx; long ops, empty; };

static void *run(void *a_) {
    struct worker_arg *a = a_;
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "claimbench: %s", PQerrorMessage(c)); exit(1); }
    char worker[64]; snprintf(worker, sizeof worker, "bench-%d", a->idx);
    char id[32], tok[64];
    while (!stop_flag) {
        const char *p[] = {worker};
        PGresult *r = q(c, RAW_CLAIM, 1, p, 1);
        if (PQntuples(r) == 0) { PQclear(r); a->empty++; continue; }
        strcpy(id, PQgetvalue(r, 0, 0)); strcpy(tok, PQgetvalue(r, 0, 1)); PQclear(r);
        const char *p2[] = {id, tok};
        PQclear(q(c, RAW_COMPLETE, 2, p2, 0));
        a->ops++;
    }
    PQfinish(c);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc >= 6 && !strcmp(argv[1], "throughput") && !strcmp(argv[2], "raw")) {
        conninfo = argv[3];
        int n = atoi(argv[4]); seconds = atoi(argv[5]);
        pthread_t th[256]; struct worker_arg args[256] = {0};
        double t0 = now_s();
        for (int i = 0; i < n; i++) { args[i].idx = i; pthread_create(&th[i], NULL, run, &args[i]); }
        struct timespec d = {seconds, 0}; nanosleep(&d, NULL);
        stop_flag = 1;
        long ops = 0, empty = 0;
        for (int i = 0; i < n; i++) { pthread_join(th[i], NULL); ops += args[i].ops; empty += args[i].empty; }
        double secs = now_s() - t0;
        printf("ops=%ld empty=%ld secs=%.2f ops_per_s=%.1f\n", ops, empty, secs, ops / secs);
        return 0;
    }
    fprintf(stderr, "usage: claimbench throughput raw CONNINFO CLIENTS SECONDS\n");
    return 2;
}

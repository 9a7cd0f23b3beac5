/* conf_main.c - the conformance runner: picks the store from argv[1], then
 * runs every case of conf_list.h in a forked child of its own (a
 * crash or a hang fails that case only), each with a fresh handle and a
 * queue of its own. Prints one line per case, naming the store. */
#include "conf.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef CONF_HAVE_HIREDIS
#include <hiredis/hiredis.h>
#endif
#ifdef CONF_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

/* Every case, in the order of conf_list.h. */
static const conf_case cases[] = {
#define CONF_CASE(x) {#x, case_##x},
#include "conf_list.h"
#undef CONF_CASE
};

static char store_url[1024];
static const char *store_kind;
static char run_tag[32];          /* part of every queue name: runs never meet */
static char tmp_dir[512];         /* "sqlite": the directory of the store file */
static char redis_prefix[64];     /* "redis": the key prefix of this run */
static const char *redis_url_var; /* the environment variable with its URL */
static char pg_schema[64];        /* "postgres": the schema of this run */

/* What an abort in a case prints after the CHECK's own message. */
static char abort_note[256];

static void on_abort(int sig) {
    ssize_t n = write(2, abort_note, strlen(abort_note));
    (void)n;
    signal(sig, SIG_DFL);
    raise(sig);
}

static int setup_store(const char *arg) {
    snprintf(run_tag, sizeof run_tag, "%x%lx", (unsigned)getpid(),
             (unsigned long)time(NULL) & 0xfffff);
    if (strcmp(arg, "sqlite") == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(tmp_dir, sizeof tmp_dir, "%s/lanes-conf-XXXXXX", t != NULL && *t ? t : "/tmp");
        if (mkdtemp(tmp_dir) == NULL) {
            perror("mkdtemp");
            return 1;
        }
        snprintf(store_url, sizeof store_url, "sqlite:%s/conf.db", tmp_dir);
    } else if (strcmp(arg, "redis") == 0 || strcmp(arg, "cluster") == 0) {
        /* "cluster": a Redis Cluster node; the prefix is a hash tag, so
         * every queue of the run lives in one slot. */
        int cluster = arg[0] == 'c';
        const char *var = cluster ? "LANES_TEST_REDIS_CLUSTER_URL" : "LANES_TEST_REDIS_URL";
        const char *base = getenv(var);
        if (base == NULL || *base == '\0') {
            printf("skipped [%s]: %s not set\n", cluster ? "redis-cluster" : "redis", var);
            return 77;
        }
        redis_url_var = var;
        snprintf(redis_prefix, sizeof redis_prefix, cluster ? "{lconf%s}" : "lconf%s", run_tag);
        snprintf(store_url, sizeof store_url, "%s%cprefix=%s", base, strchr(base, '?') ? '&' : '?',
                 redis_prefix);
    } else if (strcmp(arg, "postgres") == 0) {
        /* A schema of this run's own: runs never meet, and each run
         * prepares a fresh schema as a first process on a database does. */
        const char *base = getenv("LANES_TEST_PG_URL");
        if (base == NULL || *base == '\0') {
            printf("skipped [postgres]: LANES_TEST_PG_URL not set\n");
            return 77;
        }
        snprintf(pg_schema, sizeof pg_schema, "lconf%s", run_tag);
        snprintf(store_url, sizeof store_url, "%s%cschema=%s", base, strchr(base, '?') ? '&' : '?',
                 pg_schema);
    } else {
        snprintf(store_url, sizeof store_url, "%s", arg);
    }
    store_kind = strncmp(store_url, "sqlite:", 7) == 0    ? "sqlite"
                 : strncmp(store_url, "postgres", 8) == 0 ? "postgres"
                                                          : "redis";
    return 0;
}

#ifdef CONF_HAVE_HIREDIS
/* Delete the keys this run wrote under its prefix, on one server. */
static void cleanup_node(const char *host, int port, int db) {
    redisContext *r = redisConnect(host, port);
    if (r == NULL || r->err) {
        if (r) redisFree(r);
        return;
    }
    if (db) freeReplyObject(redisCommand(r, "SELECT %d", db));
    /* On a cluster the run's keys share one slot: its owner deletes them,
     * the other nodes find none (replicas refuse the DEL). */
    freeReplyObject(redisCommand(r, "EVAL %s 0 %s:*",
                                 "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                                 "redis.call('DEL', k) n = n + 1 end return n",
                                 redis_prefix));
    redisFree(r);
}

static void cleanup_redis(void) {
    const char *base = getenv(redis_url_var);
    char host[256] = "127.0.0.1";
    int port = 6379, db = 0;
    if (sscanf(base, "redis://%255[^:/?]:%d", host, &port) < 1) return;
    const char *slash = strchr(base + 8, '/');
    if (slash != NULL) db = atoi(slash + 1);
    const char *ports = getenv("LANES_TEST_REDIS_CLUSTER_PORTS");
    if (strstr(redis_url_var, "CLUSTER") == NULL || ports == NULL) {
        cleanup_node(host, port, db);
        return;
    }
    for (const char *p = ports; *p;) { /* every node of the cluster */
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p) break;
        cleanup_node(host, (int)n, 0);
        p = end;
    }
}
#endif

#ifdef CONF_HAVE_LIBPQ
/* Drop the schema this run prepared (its name is this program's own). */
static void cleanup_pg(void) {
    PGconn *pg = PQconnectdb(getenv("LANES_TEST_PG_URL"));
    if (pg != NULL && PQstatus(pg) == CONNECTION_OK) {
        PQclear(PQexec(pg, "SET client_min_messages = warning"));
        char sql[128];
        snprintf(sql, sizeof sql, "DROP SCHEMA IF EXISTS \"%s\" CASCADE", pg_schema);
        PQclear(PQexec(pg, sql));
    }
    PQfinish(pg);
}
#endif

static void cleanup_store(void) {
    if (tmp_dir[0] != '\0') {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
        if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", tmp_dir);
    }
#ifdef CONF_HAVE_HIREDIS
    if (redis_prefix[0] != '\0') cleanup_redis();
#endif
#ifdef CONF_HAVE_LIBPQ
    if (pg_schema[0] != '\0') cleanup_pg();
#endif
}

/* LeakSanitizer's check, where the build has one (-DLN_ASAN=ON). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/* The child: a handle, a queue, the case, then a clean close. */
static void run_child(const conf_case *tc, unsigned timeout_s) {
    alarm(timeout_s); /* SIGALRM ends a case that hangs */
    snprintf(abort_note, sizeof abort_note, "^^^ in case %s on store %s\n", tc->name, store_kind);
    signal(SIGABRT, on_abort);
    conf_ctx c;
    memset(&c, 0, sizeof c);
    char queue[LN_JOB_QUEUE_MAX];
    snprintf(queue, sizeof queue, "%s-%s", tc->name, run_tag);
    c.store = store_kind;
    c.url = store_url;
    c.queue = queue;
    char msg[512];
    int rc = ln_jobs_open_ex(&c.jobs, store_url, NULL, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "open %s: %s (%s)\n", store_url, msg, ln_strerror(rc));
        _exit(3);
    }
    tc->fn(&c);
    ln_jobs_close(c.jobs);
    fflush(NULL);
    if (__lsan_do_leak_check) __lsan_do_leak_check(); /* _exit skips LeakSanitizer's own check */
    _exit(0);
}

static int run_case(const conf_case *tc, unsigned timeout_s) {
    fflush(NULL);
    int64_t t0 = conf_now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) run_child(tc, timeout_s);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    long ms = (long)(conf_now_ms() - t0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok   %-6s %-44s %6ld ms\n", store_kind, tc->name, ms);
        return 0;
    }
    printf("FAIL %-6s %-44s ", store_kind, tc->name);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        printf("timed out after %u s\n", timeout_s);
    else if (WIFSIGNALED(status))
        printf("signal %d\n", WTERMSIG(status));
    else
        printf("exit %d\n", WEXITSTATUS(status));
    return 1;
}

/* Is case name among the names given (all when none is)? */
static int wanted(const char *name, int argc, char **argv) {
    if (argc <= 2) return 1;
    for (int a = 2; a < argc; a++)
        if (strcmp(argv[a], name) == 0) return 1;
    return 0;
}

/* The first name given that no case has, or NULL. */
static const char *unknown_case(int argc, char **argv) {
    for (int a = 2; a < argc; a++) {
        size_t i = 0;
        while (i < CONF_NELEM(cases) && strcmp(argv[a], cases[i].name) != 0) i++;
        if (i == CONF_NELEM(cases)) return argv[a];
    }
    return NULL;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: %s sqlite|redis|postgres|URL [CASE...]\n", argv[0]);
        return 2;
    }
    const char *unknown = unknown_case(argc, argv);
    if (unknown != NULL) {
        fprintf(stderr, "no case named %s\n", unknown);
        return 2;
    }
    int rc = setup_store(argv[1]);
    if (rc != 0) return rc;
    unsigned timeout = 30;
    const char *t = getenv("LN_TEST_TIMEOUT");
    if (t != NULL && atoi(t) > 0)
        timeout = (unsigned)atoi(t);
    else if (ln_test_sanitized())
        timeout *= 4;
    printf("conformance of %s (%s)\n", store_kind, store_url);
    int ran = 0, failed = 0;
    for (size_t i = 0; i < CONF_NELEM(cases); i++) {
        if (!wanted(cases[i].name, argc, argv)) continue;
        failed += run_case(&cases[i], timeout);
        ran++;
    }
    cleanup_store();
    printf("%s: %d passed, %d failed\n", store_kind, ran - failed, failed);
    if (failed) printf("failed cases are marked FAIL above, with the store\n");
    return failed ? 1 : 0;
}

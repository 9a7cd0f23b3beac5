/* redis_floor.c - what BullMQ's layout costs redis-server per job: a
 * measuring driver, not installed (docs/internals/redis-speed.md, "The
 * floor").
 *
 *   redis_floor PORT MODE JOBS B [--no-active] [--callgrind PID] [--body FILE]
 *
 * Against the redis-server on 127.0.0.1:PORT (one you started, loopback,
 * no persistence), it adds JOBS jobs to queue "floor" with lanes' own add
 * (BullMQ's layout), then runs them by one of:
 *
 *   worker  the default C worker (ln_worker_run, a no-op handler,
 *           concurrency B, exit_when_empty); --no-active sets
 *           ln_worker_opts.no_active_event
 *   step    lanes' step.lua called directly, each call completing the
 *           previous call's B jobs (planned completions, as the worker
 *           sends them) and taking B more
 *   proto   a minimal script doing only the commands BullMQ's layout
 *           needs per job, B jobs per call the same way; --no-active
 *           leaves out its XADD of the 'active' event
 *   multi   the same commands without Lua around each: per step one round
 *           trip that WATCHes and reads the finished jobs' locks and picks
 *           B ids (a two-call script), then one MULTI/EXEC the C side
 *           fills with every job's commands (ats by HINCRBY, as the C
 *           side cannot read it first inside a transaction)
 *
 * and prints redis-server's INFO cpu (user + sys) microseconds per job
 * around that part (and this process's own CPU per job, which in worker mode
 * is the worker's). With --callgrind PID (the server runs under valgrind
 * --tool=callgrind) it runs `callgrind_control -d PID` just before and just
 * after the part, so the second dump's summary is the part's instructions.
 * `redis_floor --print-step` prints the built step.lua body.
 * --body FILE: step or proto run that script text instead (a variant of
 * the built step.lua body, to cost a change without rebuilding).
 */
#include <lanes.h>
#include <lanes/jobs.h>

#include "redis_scripts.h"

#include <hiredis/hiredis.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define QUEUE "floor"
#define BASE "bull:" QUEUE ":"
#define LEASE "30000"
#define MAXB 1000

/* The prototype: KEYS[1] the queue base; ARGV[1] lease ms, ARGV[2] ndone,
 * ARGV[3] want, ARGV[4] "1" to write the 'active' event; then ndone
 * (id, atm) pairs; then want lock tokens. Finishes the done jobs
 * (planned completions: no lock check beyond the per-step DEL), takes up
 * to want from wait. Returns the taken rows {id, name, data, opts, ats,
 * atm}. */
static const char PROTO[] =
    "local B = KEYS[1]\n"
    "local t = redis.call('TIME')\n"
    "local now = tostring(t[1] * 1000 + math.floor(t[2] / 1000))\n"
    "local lease, ndone, want = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local active_ev = ARGV[4] == '1'\n"
    "local ev, act = B .. 'events', B .. 'active'\n"
    "local locks, zargs = {}, {}\n"
    "for i = 1, ndone do\n"
    "  local id, atm = ARGV[3 + 2 * i], ARGV[4 + 2 * i]\n"
    "  redis.call('LREM', act, '-1', id)\n"
    "  redis.call('HSET', B .. id, 'returnvalue', 'null', 'finishedOn', now, 'atm', atm)\n"
    "  redis.call('XADD', ev, '*', 'event', 'completed', 'jobId', id, 'returnvalue', 'null',\n"
    "             'prev', 'active')\n"
    "  locks[i] = B .. id .. ':lock'\n"
    "  zargs[2 * i - 1] = now\n"
    "  zargs[2 * i] = id\n"
    "end\n"
    "if ndone > 0 then\n"
    "  redis.call('DEL', unpack(locks))\n"
    "  redis.call('ZADD', B .. 'completed', unpack(zargs))\n"
    "end\n"
    "local out = {}\n"
    "if want > 0 then\n"
    "  local ids = redis.call('RPOP', B .. 'wait', want) or {}\n"
    "  if #ids > 0 then redis.call('LPUSH', act, unpack(ids)) end\n"
    "  local first = 5 + 2 * ndone\n"
    "  for i, id in ipairs(ids) do\n"
    "    local k = B .. id\n"
    "    local f = redis.call('HMGET', k, 'name', 'data', 'opts', 'ats', 'atm')\n"
    "    local ats = tostring((tonumber(f[4]) or 0) + 1)\n"
    "    redis.call('HSET', k, 'processedOn', now, 'ats', ats)\n"
    "    redis.call('SET', k .. ':lock', ARGV[first + i - 1], 'PX', lease)\n"
    "    if active_ev then\n"
    "      redis.call('XADD', ev, '*', 'event', 'active', 'jobId', id, 'prev', 'waiting')\n"
    "    end\n"
    "    out[i] = {id, f[1], f[2], f[3], ats, f[5] or false}\n"
    "  end\n"
    "end\n"
    "if ndone > 0 or #out > 0 then redis.call('XTRIM', ev, 'MAXLEN', '~', 10000) end\n"
    "return out\n";

typedef struct args {
    int port;
    const char *mode;
    size_t jobs, b;
    int no_active;
    int callgrind_pid;
    const char *body; /* --body FILE: this script instead of the built one */
} args;

static int die(const char *what) {
    fprintf(stderr, "redis_floor: %s\n", what);
    return 1;
}

static double server_cpu_s(redisContext *c) {
    redisReply *r = redisCommand(c, "INFO cpu");
    double u = -1, s = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "used_cpu_user:"), *q = strstr(r->str, "used_cpu_sys:");
        if (p && q) {
            u = strtod(p + 14, NULL);
            s = strtod(q + 13, NULL);
        }
    }
    if (r) freeReplyObject(r);
    return u < 0 || s < 0 ? -1 : u + s;
}

/* This process's CPU so far (user + sys, all threads), in seconds: in
 * worker mode, what lanesWorkerCpuUsPerJob measures. */
static double self_cpu_s(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* EVALSHA calls so far (INFO commandstats), or -1. */
static double server_evalsha(redisContext *c) {
    redisReply *r = redisCommand(c, "INFO commandstats");
    double v = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "cmdstat_evalsha:calls=");
        v = p ? strtod(p + 22, NULL) : 0;
    }
    if (r) freeReplyObject(r);
    return v;
}

static void dump(const args *a) {
    if (a->callgrind_pid <= 0) return;
    char cmd[64];
    snprintf(cmd, sizeof cmd, "callgrind_control -d %d >/dev/null", a->callgrind_pid);
    if (system(cmd) != 0) fprintf(stderr, "redis_floor: %s failed\n", cmd);
}

static int noop(ln_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    return 0;
}

/* Runs the n jobs of queue q to the end with the default worker. */
static int run_worker(ln_jobs *jobs, const args *a, const char *q, size_t n) {
    ln_worker_opts o;
    ln_worker_opts_init(&o);
    o.concurrency = (unsigned)a->b;
    o.exit_when_empty = 1;
    o.no_active_event = a->no_active;
    ln_worker *w = NULL;
    int err = ln_worker_create(&w, jobs, q, noop, NULL, &o);
    if (err == 0) err = ln_worker_run(w);
    ln_worker_stats st;
    if (err == 0) {
        ln_worker_get_stats(w, &st);
        if (st.completed != n) err = LN_EFAILED;
    }
    ln_worker_destroy(w);
    return err;
}

/* One script call per step: argv[0..base) fixed by the caller, then the
 * done part (from the previous reply) and the tokens. Returns the number
 * of jobs the calls completed, or -1. */
typedef struct caller {
    redisContext *c;
    const char *sha;
    int proto, no_active;
    size_t b;
    char ids[MAXB][64], atms[MAXB][24], toks[MAXB][32], dtoks[MAXB][32];
    size_t ndone;
    unsigned long long seq;
} caller;

static redisReply *call_step(caller *k) {
    static const char *argv[16 + 9 * MAXB];
    static size_t lens[16 + 9 * MAXB];
    static char nums[4][24];
    size_t n = 0;
    argv[n++] = "EVALSHA";
    argv[n++] = k->sha;
    argv[n++] = "1";
    argv[n++] = BASE;
    snprintf(nums[0], sizeof nums[0], "%zu", k->ndone);
    snprintf(nums[1], sizeof nums[1], "%zu", k->b);
    if (k->proto) {
        argv[n++] = LEASE;
        argv[n++] = nums[0];
        argv[n++] = nums[1];
        argv[n++] = k->no_active ? "0" : "1";
        for (size_t i = 0; i < k->ndone; i++) {
            argv[n++] = k->ids[i];
            argv[n++] = k->atms[i];
        }
    } else { /* step.lua's ARGV, as redis/step.c builds them */
        const char *head[] = {LEASE, "", nums[0], "0", nums[1], "0", "0", k->no_active ? "0" : "1"};
        for (size_t i = 0; i < 8; i++) argv[n++] = head[i];
        for (size_t i = 0; i < k->ndone; i++) {
            const char *g[] = {k->ids[i], k->dtoks[i], "c", "null", "-1", k->atms[i]};
            for (size_t j = 0; j < 6; j++) argv[n++] = g[j];
        }
    }
    for (size_t i = 0; i < k->b; i++) {
        snprintf(k->toks[i], sizeof k->toks[i], "floor:%llu", ++k->seq);
        argv[n++] = k->toks[i];
    }
    if (!k->proto) { /* metrics off, no worker retention (step.lua's last 5) */
        static const char *const tail[] = {"0", "-1", "-1", "-1", "-1"};
        for (size_t i = 0; i < 5; i++) argv[n++] = tail[i];
    }
    for (size_t i = 0; i < n; i++) lens[i] = strlen(argv[i]);
    return redisCommandArgv(k->c, (int)n, argv, lens);
}

/* Keep what the reply took for the next call's done part. */
static int keep_taken(caller *k, const redisReply *r) {
    if (!r || r->type != REDIS_REPLY_ARRAY) return -1;
    /* step.lua: the previous ndone codes, the next due, then 6 flat values a job */
    size_t first = k->proto ? 0 : k->ndone + 1, width = k->proto ? 1 : 6;
    if (r->elements < first || (r->elements - first) % width) return -1;
    k->ndone = (r->elements - first) / width;
    for (size_t i = 0; i < k->ndone; i++) {
        redisReply **row = r->element + first + i * width;
        if (k->proto) {
            if (row[0]->type != REDIS_REPLY_ARRAY || row[0]->elements < 6) return -1;
            row = row[0]->element;
        }
        const redisReply *id = row[0], *atm = row[5];
        if (id->type != REDIS_REPLY_STRING) return -1;
        snprintf(k->ids[i], sizeof k->ids[i], "%s", id->str);
        long long m = atm->type == REDIS_REPLY_STRING ? atoll(atm->str) : 0;
        snprintf(k->atms[i], sizeof k->atms[i], "%lld", m + 1);
        memcpy(k->dtoks[i], k->toks[i], sizeof k->dtoks[i]); /* row i took token i */
    }
    return 0;
}

/* The whole text of path (malloc'd), or NULL. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = NULL;
    long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (s = malloc((size_t)n + 1)) != NULL) {
        if (fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        } else {
            s[n] = '\0';
        }
    }
    fclose(f);
    return s;
}

static int run_script(redisContext *c, const args *a, int *steps) {
    static caller k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.proto = strcmp(a->mode, "proto") == 0;
    k.no_active = a->no_active;
    k.b = a->b;
    const char *body = k.proto ? PROTO : ln__redis_scripts[LN__RS_STEP].body;
    char *text = NULL;
    if (a->body && !(body = text = read_file(a->body))) return -1;
    redisReply *r = redisCommand(c, "SCRIPT LOAD %s", body);
    free(text);
    if (!r || r->type != REDIS_REPLY_STRING) {
        if (r && r->type == REDIS_REPLY_ERROR) fprintf(stderr, "%s\n", r->str);
        return -1;
    }
    char sha[48];
    snprintf(sha, sizeof sha, "%s", r->str);
    freeReplyObject(r);
    k.sha = sha;
    size_t finished = 0;
    *steps = 0;
    dump(a);
    for (;;) {
        r = call_step(&k);
        (*steps)++;
        finished += k.ndone;
        int bad = keep_taken(&k, r);
        if (bad && r && r->type == REDIS_REPLY_ERROR) fprintf(stderr, "%s\n", r->str);
        if (r) freeReplyObject(r);
        if (bad) return -1;
        if (k.ndone == 0) break;
    }
    dump(a);
    return finished == a->jobs ? 0 : -1;
}

/* ------------------------------------------------- multi: no Lua per job */

/* The pick: moves up to ARGV[1] ids from wait to active, returns them. */
static const char PICK[] = "local ids = redis.call('RPOP', KEYS[1] .. 'wait', ARGV[1]) or {}\n"
                           "if #ids > 0 then redis.call('LPUSH', KEYS[1] .. 'active', "
                           "unpack(ids)) end\n"
                           "return ids\n";

/* One step's jobs: those taken by this step's pick (ids, keys, locks,
 * toks) and those it finishes (dids, dlocks: the previous step's). */
typedef struct multi {
    redisContext *c;
    char sha[48], want[24], now[24];
    char ids[MAXB][64], keys[MAXB][80], locks[MAXB][90], toks[MAXB][32];
    char dids[MAXB][64], dlocks[MAXB][90];
    size_t ntaken, ndone;
    unsigned long long seq;
    int replies; /* queued in this step's transaction */
} multi;

/* Append one command: argv[0..n), each a C string. */
static void send_argv(multi *m, int n, const char **argv) {
    size_t lens[4 + 2 * MAXB];
    for (int i = 0; i < n; i++) lens[i] = strlen(argv[i]);
    redisAppendCommandArgv(m->c, n, argv, lens);
    m->replies++;
}

/* cmd followed by every done job's lock key (WATCH, MGET, DEL). */
static void send_done_locks(multi *m, const char *cmd) {
    static const char *argv[1 + MAXB];
    argv[0] = cmd;
    for (size_t i = 0; i < m->ndone; i++) argv[1 + i] = m->dlocks[i];
    send_argv(m, (int)m->ndone + 1, argv);
}

/* Round 1: WATCH and MGET the done jobs' locks, pick up to B ids. */
static int multi_pick(multi *m) {
    m->replies = 0;
    if (m->ndone > 0) {
        send_done_locks(m, "WATCH");
        send_done_locks(m, "MGET");
    }
    const char *pick[] = {"EVALSHA", m->sha, "1", BASE, m->want};
    send_argv(m, 5, pick);
    redisReply *r = NULL;
    for (int i = 0; i < m->replies; i++) {
        if (redisGetReply(m->c, (void **)&r) != REDIS_OK) return -1;
        if (i < m->replies - 1) freeReplyObject(r);
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements > MAXB) {
        freeReplyObject(r);
        return -1;
    }
    m->ntaken = r->elements;
    for (size_t i = 0; i < m->ntaken; i++) {
        snprintf(m->ids[i], sizeof m->ids[i], "%s", r->element[i]->str);
        snprintf(m->keys[i], sizeof m->keys[i], BASE "%s", m->ids[i]);
        snprintf(m->locks[i], sizeof m->locks[i], BASE "%s:lock", m->ids[i]);
        snprintf(m->toks[i], sizeof m->toks[i], "floor:%llu", ++m->seq);
    }
    freeReplyObject(r);
    return 0;
}

/* The finishes of the transaction: proto's commands for each done job. */
static void queue_finishes(multi *m) {
    static const char *zadd[2 + 2 * MAXB];
    for (size_t i = 0; i < m->ndone; i++) {
        char key[80];
        snprintf(key, sizeof key, BASE "%s", m->dids[i]);
        const char *l[] = {"LREM", BASE "active", "-1", m->dids[i]};
        send_argv(m, 4, l);
        const char *h[] = {"HSET", key, "returnvalue", "null", "finishedOn", m->now, "atm", "1"};
        send_argv(m, 8, h);
        const char *x[] = {"XADD",     BASE "events", "*",    "event", "completed", "jobId",
                           m->dids[i], "returnvalue", "null", "prev",  "active"};
        send_argv(m, 11, x);
    }
    if (m->ndone == 0) return;
    send_done_locks(m, "DEL");
    zadd[0] = "ZADD";
    zadd[1] = BASE "completed";
    for (size_t i = 0; i < m->ndone; i++) {
        zadd[2 + 2 * i] = m->now;
        zadd[3 + 2 * i] = m->dids[i];
    }
    send_argv(m, (int)(2 + 2 * m->ndone), zadd);
}

/* The takes of the transaction: proto's commands for each picked job. */
static void queue_takes(multi *m, int no_active) {
    for (size_t i = 0; i < m->ntaken; i++) {
        const char *g[] = {"HMGET", m->keys[i], "name",         "data", "opts",
                           "ats",   "atm",      "attemptsMade", "defa", "deid"};
        send_argv(m, 10, g);
        const char *h[] = {"HINCRBY", m->keys[i], "ats", "1"};
        send_argv(m, 4, h);
        const char *p[] = {"HSET", m->keys[i], "processedOn", m->now};
        send_argv(m, 4, p);
        const char *s[] = {"SET", m->locks[i], m->toks[i], "PX", LEASE};
        send_argv(m, 5, s);
        if (!no_active) {
            const char *x[] = {"XADD",  BASE "events", "*",    "event",  "active",
                               "jobId", m->ids[i],     "prev", "waiting"};
            send_argv(m, 9, x);
        }
    }
}

/* Round 2: one MULTI/EXEC with every job's commands; the taken jobs are
 * the next step's done ones. */
static int multi_exec(multi *m, int no_active) {
    snprintf(m->now, sizeof m->now, "%llu", (unsigned long long)(ln_now_ns() / 1000000));
    m->replies = 0;
    const char *mu[] = {"MULTI"};
    send_argv(m, 1, mu);
    queue_finishes(m);
    queue_takes(m, no_active);
    const char *t[] = {"XTRIM", BASE "events", "MAXLEN", "~", "10000"};
    send_argv(m, 5, t);
    const char *ex[] = {"EXEC"};
    send_argv(m, 1, ex);
    for (int i = 0; i < m->replies; i++) {
        redisReply *r;
        if (redisGetReply(m->c, (void **)&r) != REDIS_OK) return -1;
        int bad = i == m->replies - 1 && r->type != REDIS_REPLY_ARRAY; /* nil: a lock moved */
        freeReplyObject(r);
        if (bad) return -1;
    }
    m->ndone = m->ntaken;
    for (size_t i = 0; i < m->ntaken; i++) {
        memcpy(m->dids[i], m->ids[i], sizeof m->dids[i]);
        memcpy(m->dlocks[i], m->locks[i], sizeof m->dlocks[i]);
    }
    return 0;
}

/* The same commands as proto, sent by the C side in one MULTI/EXEC per
 * step: what BullMQ's layout costs without Lua around each command. */
static int run_multi(redisContext *c, const args *a, int *steps) {
    static multi m;
    memset(&m, 0, sizeof m);
    m.c = c;
    redisReply *r = redisCommand(c, "SCRIPT LOAD %s", PICK);
    if (!r || r->type != REDIS_REPLY_STRING) return -1;
    snprintf(m.sha, sizeof m.sha, "%s", r->str);
    freeReplyObject(r);
    snprintf(m.want, sizeof m.want, "%zu", a->b);
    size_t finished = 0;
    dump(a);
    for (;;) {
        if (multi_pick(&m) != 0) return -1;
        (*steps)++;
        if (m.ndone == 0 && m.ntaken == 0) break;
        finished += m.ndone;
        if (multi_exec(&m, a->no_active) != 0) return -1;
    }
    dump(a);
    return finished == a->jobs ? 0 : -1;
}

static int parse(int argc, char **argv, args *a) {
    if (argc < 5) return -1;
    memset(a, 0, sizeof *a);
    a->port = atoi(argv[1]);
    a->mode = argv[2];
    a->jobs = strtoul(argv[3], NULL, 10);
    a->b = strtoul(argv[4], NULL, 10);
    for (int i = 5; i < argc; i++) {
        if (strcmp(argv[i], "--no-active") == 0)
            a->no_active = 1;
        else if (strcmp(argv[i], "--callgrind") == 0 && i + 1 < argc)
            a->callgrind_pid = atoi(argv[++i]);
        else if (strcmp(argv[i], "--body") == 0 && i + 1 < argc)
            a->body = argv[++i];
        else
            return -1;
    }
    int known = !strcmp(a->mode, "worker") || !strcmp(a->mode, "step") ||
                !strcmp(a->mode, "proto") || !strcmp(a->mode, "multi");
    return known && a->port > 0 && a->jobs > 0 && a->b > 0 && a->b <= MAXB ? 0 : -1;
}

static int add_all(ln_jobs *jobs, const char *q, size_t n) {
    ln_job_spec specs[100];
    for (size_t i = 0; i < 100; i++) specs[i] = (ln_job_spec){"noop", "{}", NULL};
    for (size_t done = 0; done < n; done += 100) {
        size_t k = n - done < 100 ? n - done : 100;
        if (ln_jobs_add_bulk(jobs, q, specs, k, NULL, 0) != 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    args a;
    if (argc == 2 && strcmp(argv[1], "--print-step") == 0) { /* to make a --body variant */
        fputs(ln__redis_scripts[LN__RS_STEP].body, stdout);
        return 0;
    }
    if (parse(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: redis_floor PORT worker|step|proto|multi JOBS B [--no-active] "
                        "[--callgrind PID] [--body FILE]\n");
        return 2;
    }
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/0", a.port);
    ln_jobs *jobs = NULL;
    char msg[200] = "";
    if (ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg) != 0) return die(msg);
    redisContext *c = redisConnect("127.0.0.1", a.port);
    if (!c || c->err) return die("cannot connect");
    redisReply *r = redisCommand(c, "FLUSHALL");
    if (r) freeReplyObject(r);
    /* Worker mode first runs a tenth of the jobs (at most 1,000) untimed on
     * a queue of their own, so the server has the worker's scripts loaded
     * (their first EVAL compiles and hashes them) as bench.mjs's warm-up
     * gives BullMQ's side. */
    size_t warm = a.jobs / 10 > 1000 ? 1000 : a.jobs / 10 < 1 ? 1 : a.jobs / 10;
    if (strcmp(a.mode, "worker") == 0 && (add_all(jobs, QUEUE "-warmup", warm) != 0 ||
                                          run_worker(jobs, &a, QUEUE "-warmup", warm) != 0))
        return die("the warm-up run failed");
    if (add_all(jobs, QUEUE, a.jobs) != 0) return die(ln_jobs_errmsg(jobs));
    int steps = 0, err;
    double cpu0 = server_cpu_s(c), calls0 = server_evalsha(c);
    uint64_t t0 = ln_now_ns();
    double self0 = self_cpu_s();
    if (strcmp(a.mode, "worker") == 0) {
        dump(&a);
        err = run_worker(jobs, &a, QUEUE, a.jobs);
        dump(&a);
    } else if (strcmp(a.mode, "multi") == 0) {
        err = run_multi(c, &a, &steps);
    } else {
        err = run_script(c, &a, &steps);
    }
    double secs = (double)(ln_now_ns() - t0) / 1e9, self_s = self_cpu_s() - self0;
    double cpu1 = server_cpu_s(c), calls1 = server_evalsha(c);
    if (err != 0) return die("the run failed");
    (void)steps; /* the scripts' calls are counted by the server too */
    printf("mode=%s jobs=%zu B=%zu active=%s jobs_per_step=%.1f jobs_per_s=%.0f "
           "redis_cpu_us_per_job=%.2f driver_cpu_us_per_job=%.2f\n",
           a.mode, a.jobs, a.b, a.no_active ? "no" : "yes", (double)a.jobs / (calls1 - calls0 - 1),
           (double)a.jobs / secs, (cpu1 - cpu0) * 1e6 / (double)a.jobs,
           self_s * 1e6 / (double)a.jobs);
    redisFree(c);
    ln_jobs_close(jobs);
    return 0;
}

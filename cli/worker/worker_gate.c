/* worker_gate.c - starting CMD when the worker, not the job, is at fault
 * (worker.h, docs/cli.md "lanes worker"). A run that cannot start CMD
 * because the worker is short of file descriptors (EMFILE, ENFILE),
 * memory (ENOMEM) or processes (EAGAIN), or because CMD is gone or not
 * runnable (ENOENT, EACCES, ... after start-up: a deploy replacing it)
 * says nothing about its job: the worker holds the job (no new take, so
 * no attempt used nor started) and retries, backs off (doubling,
 * CLI_GATE_BACKOFF_MIN_MS to _MAX_MS), tries one start at a time until
 * one works, runs fewer at once after running out of descriptors (back up
 * by one a clean run once the streak is over), prints
 * one line when such a streak begins and one when it ends, and gives up
 * (exit CLI_WORKER_EXIT_NO_START, the jobs it holds put back) when a
 * streak outlasts --start-retry. */
#include "worker.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* A streak that begins less than this after the last streak's line gets
 * no line of its own (the worker is flapping at a limit): its end line
 * still comes once it had one. */
#define SAY_AGAIN_MS 60000

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void cli_gate_init(cli_gate *g, const char *cmd, unsigned concurrency, unsigned give_up_ms) {
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cv, &ca);
    pthread_condattr_destroy(&ca);
    g->cmd = cmd;
    g->limit = g->conc = concurrency > 0 ? concurrency : 1;
    g->give_up_ms = give_up_ms;
}

void cli_gate_destroy(cli_gate *g) {
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

int cli_gate_is_fault(int err) {
    switch (err) {
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EAGAIN:
    case ENOENT:
    case EACCES:
    case EPERM:
    case ENOTDIR:
    case ELOOP:
    case ETXTBSY:
    case ENOEXEC:
        return 1;
    default: /* E2BIG (the job's id in the environment), ...: the job's */
        return 0;
    }
}

/* Sleep on the condition until at (monotonic ms) or a signal. */
static void wait_until(cli_gate *g, uint64_t at) {
    struct timespec ts = {(time_t)(at / 1000), (long)(at % 1000) * 1000000L};
    pthread_cond_timedwait(&g->cv, &g->mu, &ts);
}

int cli_gate_enter(cli_gate *g, ln_job *job, int64_t *delay_ms, uint64_t *ticket) {
    pthread_mutex_lock(&g->mu);
    uint64_t now = now_ms();
    for (;;) { /* the job is held (its lease renewed) until it has a place */
        if (atomic_load(&g->gave_up) || ln_job_canceled(job)) break;
        if (now >= g->until && g->running < g->limit &&
            !(g->since != 0 && !g->lifted && g->probe)) {
            g->running++;
            if (g->since != 0) g->probe = 1;
            *ticket = now;
            pthread_mutex_unlock(&g->mu);
            return 1;
        }
        /* slices of 100 ms: a cancel does not signal the condition */
        uint64_t at = g->until > now ? g->until : now + 100;
        wait_until(g, at < now + 100 ? at : now + 100);
        now = now_ms();
    }
    *delay_ms = g->until > now ? (int64_t)(g->until - now) : 0;
    g->put_back += g->since != 0;
    pthread_mutex_unlock(&g->mu);
    return 0;
}

void cli_gate_started(cli_gate *g, uint64_t ticket) {
    pthread_mutex_lock(&g->mu);
    g->probe = 0;
    /* A run admitted before the streak began may have started before its
     * cause (CMD removed): it proves nothing. One admitted since lifts the
     * one-at-a-time rule; the streak ends when such a run ends well
     * (cli_gate_leave), so a run that started and then finds CMD gone
     * (cmd_gone in worker_exec.c) keeps the streak and its give-up clock. */
    if (g->since != 0 && ticket >= g->since) g->lifted = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

void cli_gate_leave(cli_gate *g, uint64_t ticket, int ok) {
    pthread_mutex_lock(&g->mu);
    g->running--;
    g->probe = 0; /* a probe that ended before its start (the job's fault) */
    int said = 0;
    uint64_t ms = 0, n = 0;
    if (ok && g->since != 0 && ticket >= g->since) {
        ms = now_ms() - g->since, n = g->put_back;
        said = g->said_streak;
        g->since = 0, g->backoff = 0, g->until = 0, g->put_back = 0, g->said_streak = 0;
        g->lifted = 0;
    } else if (ok && g->since == 0 && g->limit < g->conc) {
        g->limit++; /* a clean run, no streak: creep back toward the concurrency */
    }
    unsigned limit = g->limit;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    if (said)
        cli_wlog("info",
                 json_pack("{s:s,s:I,s:I,s:i}", "event", "start_regained", "after_ms",
                           (json_int_t)ms, "put_back", (json_int_t)n, "limit", (int)limit),
                 "'%s' starts again after %llu ms (%llu starts retried, no job failed); "
                 "running at most %u at once",
                 g->cmd, (unsigned long long)ms, (unsigned long long)n, limit);
}

/* The line of a streak that begins (under mu; the caller prints it). */
static json_t *streak_fields(const cli_gate *g, int err, const char *what) {
    return json_pack("{s:s,s:s,s:s,s:s,s:i,s:i}", "event", "start_failed", "exec", g->cmd, "what",
                     what, "error", strerror(err), "limit", (int)g->limit, "give_up_ms",
                     (int)g->give_up_ms);
}

int64_t cli_gate_fault(cli_gate *g, int err, const char *what) {
    pthread_mutex_lock(&g->mu);
    uint64_t now = now_ms();
    g->probe = 0;
    g->lifted = 0; /* one start at a time again */
    g->put_back++;
    int begins = g->since == 0;
    if (begins) {
        g->since = now;
        g->backoff = CLI_GATE_BACKOFF_MIN_MS;
        g->until = now + g->backoff;
    } else if (now >= g->until) { /* the probe failed: back off longer */
        g->backoff =
            g->backoff * 2 < CLI_GATE_BACKOFF_MAX_MS ? g->backoff * 2 : CLI_GATE_BACKOFF_MAX_MS;
        g->until = now + g->backoff;
    }
    /* Out of descriptors: run no more at once than the others that run
     * now (at least 1; this one is still counted until cli_gate_leave);
     * each clean run out of a streak raises it by one again. */
    unsigned others = g->running - 1;
    if ((err == EMFILE || err == ENFILE) && others < g->limit) g->limit = others > 0 ? others : 1;
    json_t *line = NULL;
    if (begins && (g->said == 0 || now - g->said >= SAY_AGAIN_MS)) {
        g->said = now;
        g->said_streak = 1;
        line = streak_fields(g, err, what);
    }
    int give_up =
        g->give_up_ms != 0 && now - g->since >= g->give_up_ms && !atomic_exchange(&g->gave_up, 1);
    uint64_t streak_ms = now - g->since, n = g->put_back;
    int64_t delay = (int64_t)(g->until - now);
    unsigned limit = g->limit;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    if (line != NULL)
        cli_wlog("warn", line,
                 "cannot start '%s' (%s: %s): the worker's fault, not the job's: holding jobs "
                 "without using an attempt, retrying with a backoff, at most %u at once%s",
                 g->cmd, what, strerror(err), limit,
                 g->give_up_ms != 0 ? "; giving up if it lasts past --start-retry" : "");
    if (give_up) {
        cli_wlog("error",
                 json_pack("{s:s,s:I,s:I}", "event", "start_gave_up", "after_ms",
                           (json_int_t)streak_ms, "put_back", (json_int_t)n),
                 "gave up: '%s' could not be started for %llu ms (%s: %s), %llu starts retried; "
                 "no job failed, the ones held go back; stopping (exit %d)",
                 g->cmd, (unsigned long long)streak_ms, what, strerror(err), (unsigned long long)n,
                 CLI_WORKER_EXIT_NO_START);
        ln_worker_stop(g->w);
    }
    return delay > 0 ? delay : 0;
}

/* worker_log.c - the lines `lanes worker` prints on stderr: text, or under
 * --log-format json one JSON object per line (worker.h, docs/cli.md). */
#include "worker.h"

#include "cli_err.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Written once by cli_wlog_setup before any thread starts, read after. */
static int log_format, log_verbose;
static const char *log_queue;
/* Set by the signal handler that stops the worker. */
static volatile sig_atomic_t log_stopping;

void cli_wlog_set_queue(const char *queue) {
    log_queue = queue;
}

void cli_wlog_stopping(void) {
    log_stopping = 1;
}

int cli_wlog_is_stopping(void) {
    return log_stopping != 0;
}

void cli_wlog_setup(int format, int verbose) {
    log_format = format;
    log_verbose = verbose;
}

int cli_wlog_format(void) {
    return log_format;
}

int cli_wlog_verbose(void) {
    return log_verbose;
}

/* Now as RFC 3339 UTC with milliseconds: 2026-12-01T10:22:04.123Z. */
static void now_text(char *buf, size_t size) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

void cli_wlog(const char *level, json_t *fields, const char *fmt, ...) {
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char ts[40];
    now_text(ts, sizeof ts);
    if (log_format != CLI_LOG_JSON) {
        fprintf(stderr, "%s lanes worker: %s\n", ts, msg);
        json_decref(fields);
        return;
    }
    json_t *line = json_pack("{s:s,s:s,s:o}", "ts", ts, "level", level, "msg", cli_json_text(msg));
    if (line != NULL && fields != NULL) {
        /* A field's value that is not UTF-8 made json_pack fail: the
         * caller's fields object is then NULL, and the line goes without. */
        const char *k;
        json_t *v;
        json_object_foreach(fields, k, v) {
            if (json_object_get(line, k) == NULL) json_object_set(line, k, v);
        }
    }
    json_decref(fields);
    if (line != NULL && log_queue != NULL && json_object_get(line, "queue") == NULL)
        json_object_set_new(line, "queue", cli_json_text(log_queue));
    char *s = line != NULL ? json_dumps(line, JSON_COMPACT) : NULL;
    if (s != NULL) fprintf(stderr, "%s\n", s);
    free(s);
    json_decref(line);
}

/* After a failed run of job: whether it is retried, as which retry of how
 * many, and after what delay, as the job's attempts and backoff say (read
 * from the store while the job is still active, so attempts_made does not
 * count this run yet). 0 with ", for good" or ", retry N/M in D ms" in
 * tail; -1 (unknown). */
static int retry_text(ln_jobs *jobs, ln_job *job, int for_good, char *tail, size_t tailsize,
                      json_t *f) {
    ln_job_info info;
    if (jobs == NULL || ln_jobs_get(jobs, ln_job_queue(job), ln_job_id(job), &info) != 0) return -1;
    int n = info.attempts_made + 1, retries = info.attempts - 1;
    if (for_good || n > retries) {
        snprintf(tail, tailsize, ", for good");
        json_object_set_new(f, "for_good", json_true());
    } else {
        long long d = info.backoff_ms;
        for (int i = 1; i < n && info.backoff == LN_BACKOFF_EXPONENTIAL && d < (1ll << 40); i++)
            d *= 2;
        json_object_set_new(f, "for_good", json_false());
        json_object_set_new(f, "retry", json_integer(n));
        json_object_set_new(f, "retries", json_integer(retries));
        if (info.backoff == LN_BACKOFF_CUSTOM) {
            snprintf(tail, tailsize, ", retry %d/%d after its '%s' backoff", n, retries,
                     info.backoff_type != NULL ? info.backoff_type : "custom");
        } else {
            snprintf(tail, tailsize, ", retry %d/%d in %s%lld ms", n, retries,
                     info.backoff_jitter > 0 ? "up to " : "", d);
            json_object_set_new(f, "retry_in_ms", json_integer(d));
        }
    }
    ln_job_info_clear(&info);
    return 0;
}

void cli_wlog_run(ln_jobs *jobs, ln_job *job, const char *outcome, const char *reason, int for_good,
                  long long ms) {
    json_t *f = json_pack("{s:s,s:s,s:i,s:I}", "id", ln_job_id(job), "name", ln_job_name(job),
                          "attempt", ln_job_attempt(job), "ms", (json_int_t)ms);
    char what[160], tail[160] = "";
    snprintf(what, sizeof what, "%s", outcome);
    if (strcmp(outcome, "canceled") == 0 && log_stopping) {
        /* Past --grace at a graceful stop: the worker hands the job back. */
        snprintf(what, sizeof what, "released (the worker is stopping)");
        outcome = "released";
    }
    if (f != NULL) json_object_set_new(f, "outcome", json_string(outcome));
    if (f != NULL && strcmp(outcome, "failed") == 0 &&
        retry_text(jobs, job, for_good, tail, sizeof tail, f) != 0)
        tail[0] = '\0';
    if (f != NULL && reason != NULL) json_object_set_new(f, "reason", cli_json_text(reason));
    int bad = strcmp(outcome, "failed") == 0 || strcmp(outcome, "canceled") == 0;
    cli_wlog(bad ? "warn" : "info", f, "job %s (%s, attempt %d) %s in %lld ms%s%s%s",
             ln_job_id(job), ln_job_name(job), ln_job_attempt(job), what, ms, tail,
             reason != NULL ? ": " : "", reason != NULL ? reason : "");
}

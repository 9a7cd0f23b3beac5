/* worker_log.c - the lines `lanes worker` prints on stderr: text, or under
 * --log-format json one JSON object per line (worker.h, docs/cli.md). */
#include "worker.h"

#include "cli_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Written once by cli_wlog_setup before any thread starts, read after. */
static int log_format, log_verbose;

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
    if (log_format != CLI_LOG_JSON) {
        fprintf(stderr, "lanes worker: %s\n", msg);
        json_decref(fields);
        return;
    }
    char ts[40];
    now_text(ts, sizeof ts);
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
    char *s = line != NULL ? json_dumps(line, JSON_COMPACT) : NULL;
    if (s != NULL) fprintf(stderr, "%s\n", s);
    free(s);
    json_decref(line);
}

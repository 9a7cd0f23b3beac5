/* worker_fd3.c - the fd-3 channel of an --exec program (docs/cli.md): each
 * line CMD writes to file descriptor 3 is one JSON object,
 *   {"progress": <any JSON>}   stored with ln_job_progress
 *   {"log": "text"}            appended with ln_job_log
 * (both keys in one object do both, progress first). Lines are parsed with
 * jansson; an empty line is skipped; any other line (not JSON, not an
 * object, no known key, a key of the wrong type, longer than
 * CLI_FD3_LINE_MAX) is ignored, and the first of a run is reported on
 * stderr. Everything here runs on the job's handler thread. */
#include "worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first malformed line of a run is reported, the rest are not. */
static void malformed(cli_fd3 *c, ln_job *job, const char *why) {
    if (c->warned) return;
    c->warned = 1;
    cli_wlog("warn",
             json_pack("{s:s,s:s,s:s}", "id", ln_job_id(job), "name", ln_job_name(job), "why", why),
             "job %s (%s): ignored a malformed line on fd 3 (%s); further ones of this run are "
             "ignored silently",
             ln_job_id(job), ln_job_name(job), why);
}

/* Report a store refusal once too (e.g. a log line over 64 KiB). */
static void refused(cli_fd3 *c, ln_job *job, const char *what, int err) {
    char why[128];
    snprintf(why, sizeof why, "%s refused: %s", what, ln_err_name(err));
    malformed(c, job, why);
}

static void handle_line(cli_fd3 *c, ln_job *job, const char *line, size_t n) {
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t')) n--;
    if (n == 0) return;
    json_error_t e;
    json_t *v = json_loadb(line, n, JSON_REJECT_DUPLICATES, &e);
    if (v == NULL) {
        char why[200];
        snprintf(why, sizeof why, "not JSON: %s", e.text);
        malformed(c, job, why);
        return;
    }
    json_t *progress = json_is_object(v) ? json_object_get(v, "progress") : NULL;
    json_t *log = json_is_object(v) ? json_object_get(v, "log") : NULL;
    if (!json_is_object(v)) {
        malformed(c, job, "not a JSON object");
    } else if (progress == NULL && log == NULL) {
        malformed(c, job, "no \"progress\" or \"log\" key");
    } else if (log != NULL && !json_is_string(log)) {
        malformed(c, job, "\"log\" is not a string");
    } else {
        if (progress != NULL) {
            char *text = json_dumps(progress, JSON_COMPACT | JSON_ENCODE_ANY);
            int err = text != NULL ? ln_job_progress(job, text) : LN_ENOMEM;
            if (err != 0 && err != LN_ESTALE) refused(c, job, "progress", err);
            free(text);
        }
        if (log != NULL) {
            int err = ln_job_log(job, json_string_value(log));
            if (err != 0 && err != LN_ESTALE) refused(c, job, "log line", err);
        }
    }
    json_decref(v);
}

void cli_fd3_feed(cli_fd3 *c, ln_job *job, const char *bytes, size_t n) {
    while (n > 0) {
        const char *nl = memchr(bytes, '\n', n);
        size_t part = nl ? (size_t)(nl - bytes) : n;
        if (!c->too_long && c->len + part > CLI_FD3_LINE_MAX) {
            char why[64];
            snprintf(why, sizeof why, "line longer than %d bytes", CLI_FD3_LINE_MAX);
            c->too_long = 1;
            malformed(c, job, why);
        }
        if (!c->too_long) {
            if (c->line == NULL && (c->line = malloc(CLI_FD3_LINE_MAX + 1)) == NULL) {
                c->too_long = 1; /* out of memory: drop the line */
            } else {
                memcpy(c->line + c->len, bytes, part);
                c->len += part;
            }
        }
        if (nl == NULL) return;
        if (!c->too_long) handle_line(c, job, c->line, c->len);
        c->len = 0;
        c->too_long = 0;
        bytes += part + 1;
        n -= part + 1;
    }
}

void cli_fd3_end(cli_fd3 *c, ln_job *job) {
    if (!c->too_long && c->len > 0) handle_line(c, job, c->line, c->len);
    free(c->line);
    memset(c, 0, sizeof *c);
}

/* dash_reply.c - what the parts of `lanes dash` that answer requests
 * share (dash_reply.h): error replies, a failed library call as a reply,
 * a text's preview, the clock. */
#include "dash_reply.h"

#include "cli_err.h"

#include <lanes.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Longest data or reason text a row of a jobs page carries. */
#define PREVIEW_MAX 200

int64_t cli_dash_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

cli_dash_reply cli_dash_error(unsigned status, const char *code, const char *msg) {
    cli_dash_reply r = {status, json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg)};
    return r;
}

/* A reply for a failed library call: its code as HTTP, its detail. */
cli_dash_reply cli_dash_lib_error(cli_dash *d, int err) {
    const char *msg = ln_jobs_errmsg(d->jobs);
    if (msg == NULL || *msg == '\0') msg = ln_strerror(err);
    switch (err) {
    case LN_ENOENT:
        return cli_dash_error(404, "not_found", msg);
    case LN_EINVAL:
        return cli_dash_error(409, "invalid", msg); /* wrong state, bad name */
    case LN_EBUSY:
        return cli_dash_error(409, "busy", msg);
    case LN_ETOOBIG: /* a tree too large for ln_jobs_remove_tree */
        return cli_dash_error(409, "too_big", msg);
    case LN_ENOSPC:
        return cli_dash_error(507, "no_space", msg);
    default:
        return cli_dash_error(503, "store", msg);
    }
}

json_t *cli_dash_preview(const char *s) {
    if (s == NULL) return json_null();
    size_t len = strlen(s);
    if (len <= PREVIEW_MAX) return cli_json_text(s);
    size_t cut = ln_utf8_cut(s, len, PREVIEW_MAX); /* whole UTF-8 chars */
    json_t *j = json_stringn(s, cut);
    if (j != NULL) return j;
    char *t = strndup(s, cut); /* not UTF-8: the cut text with U+FFFD (cli_err.h) */
    j = t != NULL ? cli_json_text(t) : NULL;
    free(t);
    return j;
}

/* cli_err.c - errors and warnings of the `lanes` command on stderr, as
 * text or as JSON objects (cli_err.h). */
#include "cli_err.h"

#include <lanes/jobs.h>

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int json_errors;

void cli_err_json(int on) {
    json_errors = on;
}

int cli_err_is_json(void) {
    return json_errors;
}

json_t *cli_json_text(const char *s) {
    if (s == NULL) return json_null();
    size_t n = strlen(s);
    json_t *v = json_stringn(s, n);
    if (v != NULL || n == 0) return v;
    size_t len = ln_utf8_lossy(s, n, NULL, 0); /* not UTF-8: U+FFFD per bad byte */
    char *t = len < SIZE_MAX ? malloc(len + 1) : NULL;
    if (t == NULL) return NULL;
    ln_utf8_lossy(s, n, t, len + 1);
    v = json_stringn(t, len);
    free(t);
    return v;
}

/* Print v (stolen) as one line on stderr. */
static void put_json(json_t *v) {
    char *s = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
    if (s != NULL) fprintf(stderr, "%s\n", s);
    free(s);
    json_decref(v);
}

int cli_error(int exit_code, const char *prog, const char *code, const char *hint, const char *fmt,
              ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (json_errors) {
        put_json(json_pack("{s:{s:s,s:o}}", "error", "code", code, "message", cli_json_text(msg)));
    } else {
        fprintf(stderr, "%s: %s\n", prog, msg);
        if (hint != NULL) fprintf(stderr, "%s\n", hint);
    }
    return exit_code;
}

void cli_warning(const char *prog, const char *msg) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", msg);
    if (json_errors)
        put_json(json_pack("{s:o}", "warning", cli_json_text(copy)));
    else
        fprintf(stderr, "%s: warning: %s\n", prog, msg);
}

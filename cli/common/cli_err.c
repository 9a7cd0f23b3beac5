/* cli_err.c - errors and warnings of the `lanes` command on stderr, as
 * text or as JSON objects (cli_err.h). */
#include "cli_err.h"

#include "../../src/jobs/model/utf8.h"

#include <jansson.h>
#include <stdarg.h>
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
    return s == NULL ? json_null() : ln__json_string_lossy(s, strlen(s));
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

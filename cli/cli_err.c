/* cli_err.c - errors and warnings of the `lanes` command on stderr, as
 * text or as JSON objects (cli_err.h). */
#include "cli_err.h"

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

/* The length of the one UTF-8 character at p (left bytes there), or 0.
 * jansson does the checking: the shortest prefix of 1..4 bytes it takes
 * as a string is one character. */
static size_t one_char(const char *p, size_t left) {
    for (size_t k = 1; k <= 4 && k <= left; k++) {
        json_t *v = json_stringn(p, k);
        json_decref(v);
        if (v != NULL) return k;
    }
    return 0;
}

json_t *cli_json_text(const char *s) {
    if (s == NULL) return json_null();
    json_t *v = json_string(s);
    if (v != NULL) return v;
    size_t n = strlen(s), at = 0;
    char *t = malloc(3 * n + 1); /* each byte at most U+FFFD's 3 */
    if (t == NULL) return NULL;
    for (size_t i = 0; i < n;) {
        size_t len = one_char(s + i, n - i);
        if (len == 0) {
            memcpy(t + at, "\xEF\xBF\xBD", 3);
            at += 3;
            i++;
        } else {
            memcpy(t + at, s + i, len);
            at += len;
            i += len;
        }
    }
    v = json_stringn(t, at);
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

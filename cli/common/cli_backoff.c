/* cli_backoff.c - see cli_backoff.h. */
#include "cli_backoff.h"

#include "cli_num.h"

#include <stdlib.h>
#include <string.h>

/* The type name t (n bytes) into o: builtin, or custom copied to buf. */
static int set_type(const char *t, size_t n, ln_job_opts *o, char *buf, size_t size) {
    if (n == 5 && strncmp(t, "fixed", 5) == 0) {
        o->backoff = LN_BACKOFF_FIXED;
    } else if (n == 11 && strncmp(t, "exponential", 11) == 0) {
        o->backoff = LN_BACKOFF_EXPONENTIAL;
    } else {
        if (n == 0 || n >= size) return -1;
        memcpy(buf, t, n);
        buf[n] = '\0';
        o->backoff = LN_BACKOFF_CUSTOM;
        o->backoff_type = buf;
    }
    return 0;
}

/* s as a whole number (JSON's or C's decimal form) into *out. */
static int parse_double(const char *s, double *out) {
    char *end;
    if (*s == '\0' || *s == ' ' || *s == '+') return -1;
    double d = strtod(s, &end);
    if (*end != '\0') return -1;
    *out = d;
    return 0;
}

int cli_backoff_parse(const char *s, ln_job_opts *o, char *type_buf, size_t type_size) {
    const char *c1 = strchr(s, ':');
    if (c1 == NULL) return -1;
    if (set_type(s, (size_t)(c1 - s), o, type_buf, type_size) != 0) return -1;
    const char *ms = c1 + 1, *c2 = strchr(ms, ':');
    char num[32];
    size_t n = c2 ? (size_t)(c2 - ms) : strlen(ms);
    if (n >= sizeof num) return -1;
    memcpy(num, ms, n);
    num[n] = '\0';
    long long v;
    if (cli_parse_ll(num, -(1LL << 62), 1LL << 62, &v) < 0) return -1;
    o->backoff_ms = v;
    o->backoff_jitter = 0;
    return c2 ? parse_double(c2 + 1, &o->backoff_jitter) : 0;
}

int cli_backoff_json(const json_t *v, ln_job_opts *o) {
    if (json_is_integer(v)) {
        o->backoff_ms = json_integer_value(v);
        return 0;
    }
    const json_t *type = json_object_get(v, "type"), *delay = json_object_get(v, "delay"),
                 *jitter = json_object_get(v, "jitter");
    if (!json_is_string(type) || (delay != NULL && !json_is_integer(delay)) ||
        (jitter != NULL && !json_is_number(jitter)))
        return -1;
    const char *t = json_string_value(type);
    if (strcmp(t, "fixed") == 0) {
        o->backoff = LN_BACKOFF_FIXED;
    } else if (strcmp(t, "exponential") == 0) {
        o->backoff = LN_BACKOFF_EXPONENTIAL;
    } else {
        o->backoff = LN_BACKOFF_CUSTOM;
        o->backoff_type = t;
    }
    o->backoff_ms = delay ? json_integer_value(delay) : 0;
    o->backoff_jitter = jitter ? json_number_value(jitter) : 0;
    return 0;
}

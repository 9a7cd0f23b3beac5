/* cli_num.c - see cli_num.h. */
#include "cli_num.h"

#include <lanes/jobs.h>

#include <string.h>

#include <errno.h>
#include <stdlib.h>

int cli_parse_ll(const char *s, long long lo, long long hi, long long *out) {
    if (s == NULL) return -1;
    const char *digits = *s == '-' ? s + 1 : s;
    if (*digits < '0' || *digits > '9') return -1; /* (strtoll would skip blanks, take '+') */
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_keep(const char *s, int for_worker, ln_job_keep *k) {
    long long v;
    if (s == NULL) return -1;
    if (strcmp(s, "none") == 0) {
        k->mode = for_worker ? LN_KEEP_ALL : LN_KEEP_ALWAYS;
    } else if (strcmp(s, "all") == 0) {
        k->mode = LN_KEEP_NONE;
    } else if (strncmp(s, "age:", 4) == 0 && cli_parse_ll(s + 4, 0, 1LL << 40, &v) == 0) {
        k->mode = LN_KEEP_AGE;
        k->value = v * 1000;
    } else if (cli_parse_ll(strncmp(s, "keep:", 5) == 0 ? s + 5 : s, 0, 1LL << 40, &v) == 0) {
        k->mode = LN_KEEP_COUNT;
        k->value = v;
    } else {
        return -1;
    }
    return 0;
}

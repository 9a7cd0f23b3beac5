/* cli_num.c - see cli_num.h. */
#include "cli_num.h"

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

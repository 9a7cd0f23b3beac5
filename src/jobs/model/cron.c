/* cron.c - cron patterns parsed as cron-parser 5.10.3 (BullMQ 6.7) parses
 * them, and BullMQ's `every` and iteration arithmetic for job schedulers.
 * The fire-time search in a time zone is cron_next.c; the rules both follow
 * are in docs/internals/schedules.md. */
#include "cron.h"

#include <lanes.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PATTERN 1024 /* cron-parser's MAX_EXPRESSION_LENGTH */
#define MAX_LAST 16      /* `nL` values one field may list */

enum { F_SEC, F_MIN, F_HOUR, F_DOM, F_MONTH, F_DOW, F_COUNT };

typedef struct field_def {
    const char *name;
    int min, max;
    bool has_l; /* `L` is one of the field's characters */
} field_def;

static const field_def FIELDS[F_COUNT] = {
    {"second", 0, 59, false},      {"minute", 0, 59, false}, {"hour", 0, 23, false},
    {"day of month", 1, 31, true}, {"month", 1, 12, false},  {"day of week", 0, 7, true},
};

/* Days per month as cron-parser counts them for the explicit-day check
 * (February 29). */
static const int MONTH_DAYS[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

/* One field while it is parsed: the values seen (bit per value, 0..63) and
 * the `nL` strings, both checked for duplicates as cron-parser does. */
typedef struct field_acc {
    const field_def *def;
    uint64_t mask;
    int nlast;
    char last[MAX_LAST][4];
    char *err;
    size_t errsize;
} field_acc;

static int fail(char *err, size_t errsize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errsize, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errsize, fmt, ap);
    va_end(ap);
    return LN_EINVAL;
}

/* JavaScript's parseInt on a field atom: an optional sign and leading
 * digits; *ok = false when there are none (NaN). */
static long lead_int(const char *s, bool *ok) {
    const char *p = s;
    if (*p == '-' || *p == '+') p++;
    *ok = isdigit((unsigned char)*p) != 0;
    if (!*ok) return 0;
    long v = 0;
    for (; isdigit((unsigned char)*p) && v < 1000000; p++) v = v * 10 + (*p - '0');
    return s[0] == '-' ? -v : v;
}

static bool all_digits(const char *s) {
    if (*s == '\0') return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return false;
    return true;
}

/* Replaces each run of three letters by its month (JAN..DEC = 1..12) or
 * weekday (SUN..SAT = 0..6) number, case-insensitively, in either field,
 * as cron-parser does (so a month name in day of week is a number too). */
static int resolve_aliases(const char *in, char *out, size_t outsize, const field_def *def,
                           char *err, size_t errsize) {
    static const char *const NAMES[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                        "aug", "sep", "oct", "nov", "dec", "sun", "mon",
                                        "tue", "wed", "thu", "fri", "sat"};
    size_t o = 0;
    for (size_t i = 0; in[i];) {
        if (isalpha((unsigned char)in[i]) && isalpha((unsigned char)in[i + 1]) &&
            isalpha((unsigned char)in[i + 2])) {
            char low[4] = {(char)tolower((unsigned char)in[i]),
                           (char)tolower((unsigned char)in[i + 1]),
                           (char)tolower((unsigned char)in[i + 2]), 0};
            int v = -1;
            for (int k = 0; k < 19 && v < 0; k++)
                if (strcmp(low, NAMES[k]) == 0) v = k < 12 ? k + 1 : k - 12;
            if (v < 0) return fail(err, errsize, "%s field: unknown name '%s'", def->name, low);
            o += (size_t)snprintf(out + o, outsize - o, "%d", v);
            i += 3;
        } else {
            out[o++] = in[i++];
        }
        if (o + 4 >= outsize) return fail(err, errsize, "%s field is too long", def->name);
    }
    out[o] = '\0';
    return 0;
}

/* Adds the values of one range (or one value) to the field; a value the
 * field already has is a duplicate, as in cron-parser. */
static int acc_merge(field_acc *a, uint64_t vals, const char *atom) {
    if (a->mask & vals)
        return fail(a->err, a->errsize, "%s field: '%s' repeats a value", a->def->name, atom);
    a->mask |= vals;
    return 0;
}

/* A single value: a number in range, or (day fields) `L` with up to two
 * leading digits. */
static int acc_single(field_acc *a, const char *v) {
    const field_def *d = a->def;
    if (d->has_l && strchr(v, 'L') != NULL) {
        size_t n = strlen(v);
        bool shape = n <= 3 && v[n - 1] == 'L';
        for (size_t i = 0; shape && i + 1 < n; i++) shape = isdigit((unsigned char)v[i]) != 0;
        if (!shape) return fail(a->err, a->errsize, "%s field: bad value '%s'", d->name, v);
        for (int i = 0; i < a->nlast; i++)
            if (strcmp(a->last[i], v) == 0)
                return fail(a->err, a->errsize, "%s field: '%s' repeats a value", d->name, v);
        if (a->nlast == MAX_LAST)
            return fail(a->err, a->errsize, "%s field: too many values", d->name);
        memcpy(a->last[a->nlast++], v, n + 1);
        return 0;
    }
    if (!all_digits(v)) return fail(a->err, a->errsize, "%s field: bad value '%s'", d->name, v);
    long n = strlen(v) > 6 ? 1000000 : atol(v);
    if (n < d->min || n > d->max) {
        return fail(a->err, a->errsize, "%s field: value %s out of range %d-%d", d->name, v, d->min,
                    d->max);
    }
    if (d == &FIELDS[F_DOW]) n %= 7;
    return acc_merge(a, 1ull << n, v);
}

/* base (`A-B`, or a value) stepped by step; a value alone ignores a step,
 * as cron-parser does. Day of week: a range ending on 7 whose step lands
 * there also gives 0 (Sunday). */
static int acc_range(field_acc *a, const char *base, long step, bool has_step, const char *atom) {
    const field_def *d = a->def;
    const char *dash = strchr(base, '-');
    if (dash == NULL) return acc_single(a, base);
    bool ok1, ok2;
    long lo = lead_int(base, &ok1), hi = lead_int(dash + 1, &ok2);
    char range[32];
    snprintf(range, sizeof range, "%d-%d", d->min, d->max);
    if (!ok1 || !ok2 || lo < d->min || hi > d->max)
        return fail(a->err, a->errsize, "%s field: range '%s' outside %s", d->name, atom, range);
    if (lo > hi)
        return fail(a->err, a->errsize, "%s field: range '%s' runs backwards", d->name, atom);
    if (has_step && step <= 0)
        return fail(a->err, a->errsize, "%s field: step in '%s' must be > 0", d->name, atom);
    uint64_t vals = 0;
    if (d == &FIELDS[F_DOW] && hi % 7 == 0 && (hi - lo) % step == 0) vals |= 1;
    for (long v = lo; v <= hi; v += step) vals |= 1ull << v;
    return acc_merge(a, vals, atom);
}

/* One comma-separated atom: `V`, `A-B`, `X/S` (X a value means X-max). */
static int acc_atom(field_acc *a, char *atom) {
    if (*atom == '\0') return fail(a->err, a->errsize, "%s field: empty list item", a->def->name);
    char *slash = strchr(atom, '/');
    if (slash == NULL) return acc_range(a, atom, 1, false, atom);
    if (strchr(slash + 1, '/') != NULL)
        return fail(a->err, a->errsize, "%s field: bad step '%s'", a->def->name, atom);
    char base[4 * MAX_PATTERN + 16];
    *slash = '\0';
    if (strchr(atom, '-') != NULL)
        snprintf(base, sizeof base, "%s", atom);
    else
        snprintf(base, sizeof base, "%s-%d", atom, a->def->max);
    *slash = '/';
    bool ok;
    long step = lead_int(slash + 1, &ok);
    if (!ok)
        return fail(a->err, a->errsize, "%s field: step in '%s' is not a number", a->def->name,
                    atom);
    return acc_range(a, base, step, true, atom);
}

/* The characters a field may hold after its names are resolved. */
static int check_chars(const field_def *d, const char *v, char *err, size_t errsize) {
    if (strchr(v, 'H') != NULL)
        return fail(err, errsize, "%s field: H (hashed values) is not supported", d->name);
    for (const char *p = v; *p; p++) {
        if (isdigit((unsigned char)*p) || strchr("?,*/-", *p) != NULL) continue;
        if (*p == 'L' && d->has_l) continue;
        return fail(err, errsize, "%s field: invalid character '%c' in '%s'", d->name, *p, v);
    }
    return 0;
}

/* Parses one field's text into its value mask (and, for day fields, the
 * `nL` strings in acc). */
static int parse_field(field_acc *acc, const field_def *d, const char *text, char *err,
                       size_t errsize) {
    char buf[MAX_PATTERN + 64], expanded[4 * MAX_PATTERN];
    memset(acc, 0, sizeof *acc);
    acc->def = d;
    acc->err = err;
    acc->errsize = errsize;
    int rc = 0;
    if (d == &FIELDS[F_MONTH] || d == &FIELDS[F_DOW])
        rc = resolve_aliases(text, buf, sizeof buf, d, err, errsize);
    else
        snprintf(buf, sizeof buf, "%s", text);
    if (rc == 0) rc = check_chars(d, buf, err, errsize);
    if (rc != 0) return rc;
    /* `*` and `?` stand for min-max. */
    size_t o = 0;
    for (const char *p = buf; *p && o + 8 < sizeof expanded; p++) {
        if (*p == '*' || *p == '?')
            o += (size_t)snprintf(expanded + o, sizeof expanded - o, "%d-%d", d->min, d->max);
        else
            expanded[o++] = *p;
    }
    expanded[o] = '\0';
    char *save = NULL;
    /* strtok_r would drop empty items, which cron-parser refuses. */
    for (char *atom = expanded;; atom = save + 1) {
        save = strchr(atom, ',');
        if (save != NULL) *save = '\0';
        rc = acc_atom(acc, atom);
        if (rc != 0 || save == NULL) return rc;
    }
}

/* `D#n` in day of week: the weekday part goes on, n (1..5) is returned. */
static int split_nth(char *dow, int *nth, char *err, size_t errsize) {
    char *hash = strchr(dow, '#');
    *nth = 0;
    if (hash == NULL) return 0;
    if (strpbrk(dow, ",-/") != NULL)
        return fail(err, errsize,
                    "day of week field: '#' cannot be combined "
                    "with ',', '-' or '/' ('%s')",
                    dow);
    const char *n = hash + 1;
    if (strchr(n, '#') != NULL || !all_digits(n) || strlen(n) > 2 || atoi(n) < 1 || atoi(n) > 5)
        return fail(err, errsize,
                    "day of week field: the occurrence after '#' must be 1-5 "
                    "('%s')",
                    dow);
    *nth = atoi(n);
    *hash = '\0';
    return 0;
}

/* Splits pattern into its six fields (missing leading ones from the
 * defaults "0 * * * * *"), into buf. */
static int split_fields(const char *pattern, char *buf, size_t bufsize, const char *f[F_COUNT],
                        char *err, size_t errsize) {
    static const struct {
        const char *name, *expr;
    } NAMED[] = {{"@yearly", "0 0 0 1 1 *"},     {"@annually", "0 0 0 1 1 *"},
                 {"@monthly", "0 0 0 1 * *"},    {"@weekly", "0 0 0 * * 0"},
                 {"@daily", "0 0 0 * * *"},      {"@hourly", "0 0 * * * *"},
                 {"@minutely", "0 * * * * *"},   {"@secondly", "* * * * * *"},
                 {"@weekdays", "0 0 0 * * 1-5"}, {"@weekends", "0 0 0 * * 0,6"}};
    static const char *const DEFAULTS[F_COUNT] = {"0", "*", "*", "*", "*", "*"};
    if (pattern == NULL || *pattern == '\0') return fail(err, errsize, "empty cron pattern");
    for (size_t i = 0; i < sizeof NAMED / sizeof NAMED[0]; i++)
        if (strcmp(pattern, NAMED[i].name) == 0) pattern = NAMED[i].expr;
    if (strlen(pattern) > MAX_PATTERN)
        return fail(err, errsize, "cron pattern longer than %d characters", MAX_PATTERN);
    snprintf(buf, bufsize, "%s", pattern);
    const char *atoms[F_COUNT];
    int n = 0;
    for (char *p = buf; *p;) {
        while (isspace((unsigned char)*p)) *p++ = '\0';
        if (*p == '\0') break;
        if (n == F_COUNT) return fail(err, errsize, "cron pattern has more than 6 fields");
        atoms[n++] = p;
        while (*p && !isspace((unsigned char)*p)) p++;
    }
    if (n == 0) return fail(err, errsize, "empty cron pattern");
    for (int i = 0; i < F_COUNT; i++)
        f[i] = i < F_COUNT - n ? DEFAULTS[i] : atoms[i - (F_COUNT - n)];
    return 0;
}

/* cron-parser's check that a single month's explicit day can occur. */
static int check_explicit_day(const ln__cron *c, char *err, size_t errsize) {
    if (__builtin_popcount(c->month) != 1 || c->dom_last || !c->dow_star) return 0;
    int m = __builtin_ctz(c->month), first = c->dom ? __builtin_ctz(c->dom) : 0;
    if (first > MONTH_DAYS[m - 1])
        return fail(err, errsize, "day %d never occurs in month %d", first, m);
    return 0;
}

/* The `L` rules of day of week: "nL" is the last such weekday; once the
 * field has an `L` anywhere, cron-parser also takes every value's first
 * digit as such a weekday (docs/internals/schedules.md). */
static void dow_last_rules(ln__cron *c, const field_acc *a, const char *raw) {
    c->dow_has_last = strchr(raw, 'L') != NULL;
    if (!c->dow_has_last) return;
    for (int v = 0; v <= 7; v++)
        if (a->mask & (1ull << v)) c->dow_last |= (uint8_t)(1u << (v % 7));
    for (int i = 0; i < a->nlast; i++)
        if (isdigit((unsigned char)a->last[i][0]))
            c->dow_last |= (uint8_t)(1u << ((a->last[i][0] - '0') % 7));
}

int ln__cron_parse(ln__cron *out, const char *pattern, char *err, size_t errsize) {
    char buf[MAX_PATTERN + 1], dow[MAX_PATTERN + 1];
    const char *f[F_COUNT];
    ln__cron c;
    memset(&c, 0, sizeof c);
    int rc = split_fields(pattern, buf, sizeof buf, f, err, errsize);
    if (rc != 0) return rc;
    field_acc a;
    uint64_t masks[F_COUNT] = {0};
    static const int ORDER[] = {F_SEC, F_MIN, F_HOUR, F_MONTH, F_DOM};
    for (size_t i = 0; i < sizeof ORDER / sizeof ORDER[0]; i++) {
        rc = parse_field(&a, &FIELDS[ORDER[i]], f[ORDER[i]], err, errsize);
        if (rc != 0) return rc;
        masks[ORDER[i]] = a.mask;
    }
    c.dom_last = strchr(f[F_DOM], 'L') != NULL;
    snprintf(dow, sizeof dow, "%s", f[F_DOW]);
    int nth;
    if ((rc = split_nth(dow, &nth, err, errsize)) != 0 ||
        (rc = parse_field(&a, &FIELDS[F_DOW], dow, err, errsize)) != 0)
        return rc;
    for (int i = 0; i < a.nlast; i++)
        if (strcmp(a.last[i], "L") == 0)
            return fail(err, errsize,
                        "day of week field: 'L' needs a weekday "
                        "before it (5L: the last Friday)");
    c.sec = masks[F_SEC];
    c.min = masks[F_MIN];
    c.hour = (uint32_t)masks[F_HOUR];
    c.hour_count = __builtin_popcountll(masks[F_HOUR]);
    c.dom = (uint32_t)masks[F_DOM];
    c.month = (uint16_t)masks[F_MONTH];
    c.dow = (uint8_t)(a.mask & 0x7f);
    c.nth = (uint8_t)nth;
    c.dom_star = strcmp(f[F_DOM], "*") == 0 || strcmp(f[F_DOM], "?") == 0;
    c.dow_star = strcmp(f[F_DOW], "*") == 0 || strcmp(f[F_DOW], "?") == 0;
    dow_last_rules(&c, &a, f[F_DOW]);
    if ((rc = check_explicit_day(&c, err, errsize)) != 0) return rc;
    *out = c;
    return 0;
}

/* Floor division for the Lua's math.floor(a / b) (b > 0). */
static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

void ln__every_next(int64_t prev_ms, int64_t every, int64_t now_ms, int64_t offset,
                    int64_t start_ms, int64_t *next_ms, int64_t *offset_out) {
    int64_t next;
    if (prev_ms == LN__CRON_NONE) {
        if (start_ms != 0) {
            next = start_ms > now_ms ? start_ms : now_ms;
        } else if (offset > 0) {
            /* The next slot of the grid of multiples of every, moved by
             * offset. */
            next = floor_div(now_ms, every) * every + offset;
            if (next <= now_ms) next += every;
        } else {
            next = now_ms;
        }
    } else {
        next = prev_ms + every;
        if (next < now_ms) {
            /* Iterations were missed: realign on the grid (keeping the
             * offset) instead of producing each missed one. */
            int64_t aligned = floor_div(now_ms, every) * every + offset;
            next = aligned <= now_ms ? aligned + every : aligned;
        }
    }
    if (offset == 0) offset = next - floor_div(next, every) * every;
    *next_ms = next;
    *offset_out = offset;
}

int ln__sched_next(const ln__sched_opts *o, const ln__sched_prev *prev, int64_t now_ms,
                   int64_t *next_ms, int64_t *offset_out, char *err, size_t errsize) {
    *next_ms = LN__CRON_NONE;
    *offset_out = 0;
    /* upsertJobScheduler: the iteration to make is count + 1; past the
     * limit, or once now is past the end date, the scheduler is done. */
    int64_t iteration = prev->count > 0 ? prev->count + 1 : 1;
    if (o->limit >= 0 && iteration > o->limit) return 0;
    if (o->end_ms != 0 && now_ms > o->end_ms) return 0;
    if (o->every > 0) {
        ln__every_next(prev->millis, o->every, now_ms, o->offset, o->start_ms, next_ms, offset_out);
        return 0;
    }
    if (o->cron == NULL) {
        snprintf(err, errsize, "a scheduler needs every > 0 or a pattern");
        return LN_EINVAL;
    }
    int64_t base = now_ms;
    if (prev->millis != LN__CRON_NONE && prev->millis > base) base = prev->millis;
    /* immediately: the creation runs now, whatever cron-parser says (only
     * the creation sees the option; iterations do not carry it). */
    if (o->immediately && prev->count == 0) {
        *next_ms = base;
        return 0;
    }
    int64_t next;
    int rc = ln__cron_next(o->cron, o->tz, base, o->start_ms, o->end_ms, &next, err, errsize);
    if (rc != 0 || next == LN__CRON_NONE) return rc;
    *next_ms = next < base ? base : next;
    return 0;
}

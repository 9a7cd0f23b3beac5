/* cron_next.c - the next fire time of a cron pattern in an IANA time zone,
 * stepped exactly as cron-parser 5.10.3 steps its luxon DateTime, so that a
 * DST gap or repeated hour gives the time BullMQ 6.7 gives. Offsets come
 * from ICU (ucal_*), never from the process's TZ.
 *
 * Threads: every call opens its own UCalendar and closes it before it
 * returns; nothing is shared, so any thread may call at any time.
 * The rules, and where they come from, are in docs/internals/schedules.md. */
#include "cron.h"

#include <lanes.h>

#include <stdio.h>
#include <string.h>
#include <unicode/ucal.h>
#include <unicode/ustring.h>

#define LOOP_LIMIT 10000 /* cron-parser's bound on search steps */
#define MS_SEC 1000LL
#define MS_MIN (60 * MS_SEC)
#define MS_HOUR (60 * MS_MIN)
#define MS_DAY (24 * MS_HOUR)
#define MS_DATE_MAX 8640000000000000LL /* a JavaScript Date's range: +-1e8 days */

/* A luxon DateTime: the instant, the offset it is shown with, and the
 * local fields of ts + off. Invariant: the fields are those of ts + off. */
typedef struct cdt {
    int64_t ts;                     /* ms since the epoch, UTC */
    int64_t off;                    /* ms east of UTC */
    int y, mo, d, h, mi, s, ms, wd; /* wd: 0 = Sunday */
} cdt;

/* The search state: the zone, cron-parser's CronDate DST marks, and its
 * per-day cache of "is this a DST transition day". */
typedef struct search {
    UCalendar *cal;
    const ln__cron *c;
    int dst_start, dst_landing, dst_end; /* -1: unset */
    int64_t day_key;
    bool day_is_transition;
    int icu_err;
} search;

static int64_t fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1..12). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = fdiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int *y, int *m, int *d) {
    z += 719468;
    int64_t era = fdiv(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static bool leap(int y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int y, int m) {
    static const int D[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : D[m - 1];
}

/* Date.UTC(y, mo - 1, d, h, mi, s, ms): out-of-range fields carry over. */
static int64_t local_ts(int y, int mo, int d, int h, int mi, int s, int ms) {
    int64_t yy = y + fdiv(mo - 1, 12);
    int m = (int)(mo - 1 - fdiv(mo - 1, 12) * 12) + 1;
    int64_t days = days_from_civil(yy, m, 1) + d - 1;
    return days * MS_DAY + h * MS_HOUR + mi * MS_MIN + s * MS_SEC + ms;
}

/* The zone's offset at ts (luxon's IANAZone.offset, from ICU). */
static int64_t zone_offset(search *st, int64_t ts) {
    UErrorCode e = U_ZERO_ERROR;
    ucal_setMillis(st->cal, (UDate)ts, &e);
    int32_t zone = ucal_get(st->cal, UCAL_ZONE_OFFSET, &e);
    int32_t dst = ucal_get(st->cal, UCAL_DST_OFFSET, &e);
    if (U_FAILURE(e)) {
        st->icu_err = 1;
        return 0;
    }
    return (int64_t)zone + dst;
}

static void fill(cdt *t, int64_t ts, int64_t off) {
    int64_t local = ts + off;
    int64_t days = fdiv(local, MS_DAY), rem = local - days * MS_DAY;
    t->ts = ts;
    t->off = off;
    civil_from_days(days, &t->y, &t->mo, &t->d);
    t->h = (int)(rem / MS_HOUR);
    t->mi = (int)(rem / MS_MIN % 60);
    t->s = (int)(rem / MS_SEC % 60);
    t->ms = (int)(rem % MS_SEC);
    t->wd = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday */
}

/* luxon's fixOffset: the instant of local time local_ms, guessing offset o
 * first. A local time that exists twice keeps o when o is one of its
 * offsets; one that does not exist moves forward by the gap. */
static void at_local(search *st, cdt *t, int64_t local_ms, int64_t o) {
    int64_t guess = local_ms - o;
    int64_t o2 = zone_offset(st, guess);
    if (o2 == o) {
        fill(t, guess, o);
        return;
    }
    guess -= o2 - o;
    int64_t o3 = zone_offset(st, guess);
    if (o2 == o3) {
        fill(t, guess, o2);
        return;
    }
    fill(t, local_ms - (o2 < o3 ? o2 : o3), o2 > o3 ? o2 : o3);
}

/* DateTime.set of the time fields (-1: keep). */
static void set_time(search *st, cdt *t, int h, int mi, int s, int ms) {
    at_local(st, t,
             local_ts(t->y, t->mo, t->d, h < 0 ? t->h : h, mi < 0 ? t->mi : mi, s < 0 ? t->s : s,
                      ms < 0 ? t->ms : ms),
             t->off);
}

/* DateTime.plus of a fixed span: the instant moves, the offset follows. */
static void plus_ms(search *st, cdt *t, int64_t span) {
    at_local(st, t, local_ts(t->y, t->mo, t->d, t->h, t->mi, t->s, t->ms), t->off);
    int64_t ts = t->ts + span;
    fill(t, ts, zone_offset(st, ts));
}

/* DateTime.plus({days}) / plus({months: 1}): calendar fields, then the
 * offset fixed from the old one. */
static void plus_days(search *st, cdt *t, int days) {
    at_local(st, t, local_ts(t->y, t->mo, t->d + days, t->h, t->mi, t->s, t->ms), t->off);
}

static void plus_month(search *st, cdt *t) {
    int y = t->mo == 12 ? t->y + 1 : t->y, mo = t->mo == 12 ? 1 : t->mo + 1;
    int d = t->d < month_days(y, mo) ? t->d : month_days(y, mo);
    at_local(st, t, local_ts(y, mo, d, t->h, t->mi, t->s, t->ms), t->off);
}

enum unit { U_MONTH, U_DAY, U_HOUR, U_MINUTE, U_SECOND };

/* cron-parser's add<Unit>: step one unit and go to its start. */
static void add_unit(search *st, cdt *t, enum unit u) {
    switch (u) {
    case U_MONTH:
        plus_month(st, t);
        at_local(st, t, local_ts(t->y, t->mo, 1, 0, 0, 0, 0), t->off);
        break;
    case U_DAY:
        plus_days(st, t, 1);
        set_time(st, t, 0, 0, 0, 0);
        break;
    case U_HOUR:
        plus_ms(st, t, MS_HOUR);
        set_time(st, t, -1, 0, 0, 0);
        break;
    case U_MINUTE:
        plus_ms(st, t, MS_MIN);
        set_time(st, t, -1, -1, 0, 0);
        break;
    case U_SECOND:
        plus_ms(st, t, MS_SEC);
        break;
    }
}

/* cron-parser's applyDateOperation (forward): a step of an hour or less
 * that crosses a DST gap marks the skipped hours (dst_start, the first
 * skipped hour, and dst_landing, the hour landed on); one that lands on
 * the same wall hour at :00:00 marks the repeated hour (dst_end). Neither
 * is marked when the pattern allows all 24 hours. */
static void apply_op(search *st, cdt *t, enum unit u) {
    if (u == U_MONTH || u == U_DAY) {
        add_unit(st, t, u);
        return;
    }
    int prev_hour = t->h;
    int64_t prev_off = t->off;
    add_unit(st, t, u);
    int advance = (t->h - prev_hour + 24) % 24;
    bool all_hours = st->c->hour_count == 24;
    if (t->off > prev_off && advance >= 2) {
        if (!all_hours) {
            st->dst_start = (prev_hour + 1) % 24;
            st->dst_landing = t->h;
        }
    } else if (advance == 0 && t->mi == 0 && t->s == 0) {
        if (!all_hours) st->dst_end = t->h;
    }
}

/* Whether t's local day has two offsets (start and end of day differ). */
static bool transition_day(search *st, const cdt *t) {
    int64_t key = (int64_t)t->y * 10000 + t->mo * 100 + t->d;
    if (key == st->day_key) return st->day_is_transition;
    cdt a = *t, b = *t;
    set_time(st, &a, 0, 0, 0, 0);
    /* luxon's endOf('day'): the next day's start, less 1 ms. */
    plus_days(st, &b, 1);
    set_time(st, &b, 0, 0, 0, 0);
    int64_t end_off = zone_offset(st, b.ts - 1);
    st->day_key = key;
    st->day_is_transition = a.off != end_off;
    return st->day_is_transition;
}

static bool has64(uint64_t mask, int v) {
    return (mask >> v) & 1;
}

/* The least allowed value above v, or -1. */
static int next_in(uint64_t mask, int v) {
    uint64_t above = v >= 63 ? 0 : mask & ~((2ull << v) - 1);
    return above ? __builtin_ctzll(above) : -1;
}

static int lowest(uint64_t mask) {
    return __builtin_ctzll(mask);
}

/* Day of month OR day of week when both are restricted; `L`, `nL`, `D#n`. */
static bool day_matches(const ln__cron *c, const cdt *t) {
    int last = month_days(t->y, t->mo);
    bool dom = has64(c->dom, t->d) || (c->dom_last && t->d == last);
    bool dow = (has64(c->dow, t->wd) && (c->nth == 0 || (t->d + 6) / 7 == c->nth)) ||
               (c->dow_has_last && t->d > last - 7 && has64(c->dow_last, t->wd));
    if (!c->dom_star && !c->dow_star) return dom || dow;
    if (c->dow_star) return dom;
    return c->dom_star && dow;
}

/* cron-parser's matchHour (forward): true when t's hour may fire. On the
 * landing hour of a DST gap, an allowed hour that was skipped fires there;
 * the second pass of a repeated hour is stepped over; otherwise t moves to
 * the next allowed hour (hour by hour on a transition day) and false. */
static bool match_hour(search *st, cdt *t) {
    const ln__cron *c = st->c;
    int hour = t->h;
    if (st->dst_start >= 0 && st->dst_landing == hour) {
        for (int h = st->dst_start; h != hour; h = (h + 1) % 24)
            if (has64(c->hour, h)) return true;
    }
    if (st->dst_end == hour) {
        st->dst_end = -1;
        apply_op(st, t, U_HOUR);
        return false;
    }
    if (has64(c->hour, hour)) return true;
    st->dst_start = st->dst_landing = -1;
    int next = next_in(c->hour, hour);
    if (next < 0) {
        apply_op(st, t, U_DAY);
        return false;
    }
    if (transition_day(st, t)) {
        for (int i = 0; i < next - hour; i++) {
            apply_op(st, t, U_HOUR);
            if (t->h >= next) break; /* a gap may jump two wall hours */
        }
    } else {
        set_time(st, t, next, -1, -1, -1);
    }
    set_time(st, t, -1, lowest(c->min), -1, -1);
    set_time(st, t, -1, -1, lowest(c->sec), -1);
    return false;
}

static void next_minute(search *st, cdt *t) {
    int m = next_in(st->c->min, t->mi);
    if (m >= 0) {
        set_time(st, t, -1, m, -1, -1);
    } else {
        apply_op(st, t, U_HOUR);
        set_time(st, t, -1, lowest(st->c->min), -1, -1);
    }
    set_time(st, t, -1, -1, lowest(st->c->sec), -1);
}

static void next_second(search *st, cdt *t) {
    int s = next_in(st->c->sec, t->s);
    if (s >= 0) {
        set_time(st, t, -1, -1, s, -1);
        return;
    }
    apply_op(st, t, U_MINUTE);
    set_time(st, t, -1, -1, lowest(st->c->sec), -1);
}

/* cron-parser's findSchedule (forward) from t: the matching time, or
 * LN__CRON_NONE when it leaves [start, end] or takes LOOP_LIMIT steps. */
static int64_t find(search *st, cdt *t, int64_t start_ms, int64_t end_ms) {
    const ln__cron *c = st->c;
    int64_t from = t->ts;
    if (t->ms > 0) {
        set_time(st, t, -1, -1, -1, 0);
        apply_op(st, t, U_SECOND);
    }
    for (int step = 1; step < LOOP_LIMIT; step++) {
        if (st->icu_err) return LN__CRON_NONE;
        if ((start_ms != 0 && t->ts < start_ms) || (end_ms != 0 && t->ts > end_ms))
            return LN__CRON_NONE;
        if (!has64(c->month, t->mo)) {
            apply_op(st, t, U_MONTH);
        } else if (!day_matches(c, t)) {
            apply_op(st, t, U_DAY);
        } else if (!match_hour(st, t)) {
            continue;
        } else if (!has64(c->min, t->mi)) {
            next_minute(st, t);
        } else if (!has64(c->sec, t->s)) {
            next_second(st, t);
        } else if (t->ts == from) {
            apply_op(st, t, U_SECOND);
        } else {
            return t->ts;
        }
    }
    return LN__CRON_NONE;
}

/* Opens a calendar on zone tz (NULL or "": UTC). */
static int open_zone(const char *tz, UCalendar **cal, char *err, size_t errsize) {
    UChar id[128], canon[128];
    const char *name = tz == NULL || *tz == '\0' ? "UTC" : tz;
    if (strlen(name) >= sizeof id / sizeof id[0]) {
        snprintf(err, errsize, "unknown time zone '%.40s...'", name);
        return LN_EINVAL;
    }
    u_uastrcpy(id, name);
    UErrorCode e = U_ZERO_ERROR;
    UBool system = 0;
    ucal_getCanonicalTimeZoneID(id, -1, canon, 128, &system, &e);
    if (U_FAILURE(e) || !system) {
        snprintf(err, errsize, "unknown time zone '%s'", name);
        return LN_EINVAL;
    }
    e = U_ZERO_ERROR;
    *cal = ucal_open(id, -1, "en_US_POSIX", UCAL_GREGORIAN, &e);
    if (U_FAILURE(e) || *cal == NULL) {
        snprintf(err, errsize, "time zone '%s': %s", name,
                 e == U_MEMORY_ALLOCATION_ERROR ? "out of memory" : u_errorName(e));
        return e == U_MEMORY_ALLOCATION_ERROR ? LN_ENOMEM : LN_EINVAL;
    }
    return 0;
}

int ln__cron_check_tz(const char *tz, char *err, size_t errsize) {
    UCalendar *cal = NULL;
    int rc = open_zone(tz, &cal, err, errsize);
    if (cal != NULL) ucal_close(cal);
    return rc;
}

int ln__cron_next(const ln__cron *c, const char *tz, int64_t after_ms, int64_t start_ms,
                  int64_t end_ms, int64_t *next_ms, char *err, size_t errsize) {
    *next_ms = LN__CRON_NONE;
    const int64_t *bound = NULL;
    const int64_t times[3] = {after_ms, start_ms, end_ms};
    for (int i = 0; i < 3; i++)
        if (times[i] < -MS_DATE_MAX || times[i] > MS_DATE_MAX) bound = &times[i];
    if (bound != NULL) { /* cron-parser has no such date either */
        snprintf(err, errsize, "time %lld ms is outside the dates a schedule can have (+-%lld ms)",
                 (long long)*bound, MS_DATE_MAX);
        return LN_EINVAL;
    }
    search st = {.c = c, .dst_start = -1, .dst_landing = -1, .dst_end = -1, .day_key = -1};
    int rc = open_zone(tz, &st.cal, err, errsize);
    if (rc != 0) return rc;
    /* cron-parser moves currentDate into [startDate, endDate] first. */
    int64_t from = after_ms;
    if (start_ms != 0 && from < start_ms)
        from = start_ms;
    else if (end_ms != 0 && from > end_ms)
        from = end_ms;
    cdt t;
    fill(&t, from, zone_offset(&st, from));
    *next_ms = find(&st, &t, start_ms, end_ms);
    if (st.icu_err) {
        snprintf(err, errsize, "time zone '%s': ICU could not convert a time",
                 tz != NULL && *tz ? tz : "UTC");
        rc = LN_EINVAL;
        *next_ms = LN__CRON_NONE;
    }
    ucal_close(st.cal);
    return rc;
}

/* cron.h - the computing core of job schedulers: cron patterns parsed and
 * stepped the way BullMQ 6.7's cron-parser (5.10.3, with luxon) does it,
 * in a named IANA time zone (ICU), and BullMQ's `every` arithmetic with its
 * start date, end date and iteration limit. Pure computation: no store, no
 * clock (the caller passes "now"). What is matched, and every DST rule, is
 * in docs/internals/schedules.md. */
#ifndef LN_JOBS_CRON_H
#define LN_JOBS_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "No such time": no next fire time (past the end date, nothing matches). */
#define LN__CRON_NONE INT64_MIN

/* A parsed pattern: one bit per allowed value of each field. */
typedef struct ln__cron {
    uint64_t sec;      /* bits 0..59 */
    uint64_t min;      /* bits 0..59 */
    uint32_t hour;     /* bits 0..23 */
    uint32_t dom;      /* bits 1..31 */
    uint16_t month;    /* bits 1..12 */
    uint8_t dow;       /* bits 0..6, Sunday 0 (7 folds onto 0) */
    uint8_t dow_last;  /* bits 0..6: "last such weekday of the month" */
    uint8_t nth;       /* 1..5 for `D#n`, 0 for none */
    bool dom_last;     /* `L` in day of month */
    bool dow_has_last; /* an `L` anywhere in day of week */
    bool dom_star;     /* day of month written `*` or `?` (cron-parser's wildcard) */
    bool dow_star;     /* day of week written `*` or `?` */
    int hour_count;    /* how many hours are allowed (a DST rule depends on 24) */
} ln__cron;

/* Parses pattern (1..6 whitespace-separated fields, the seconds first when
 * there are 6, missing leading fields filled with "0 * * * * *"; or one of
 * the @yearly... names). Returns 0 or LN_EINVAL with the reason in err. */
int ln__cron_parse(ln__cron *out, const char *pattern, char *err, size_t errsize);

/* The next fire time of c strictly after after_ms (ms since the epoch, UTC)
 * in time zone tz (an IANA id; NULL or "" is UTC), like cron-parser's next()
 * with currentDate = after_ms, startDate = start_ms and endDate = end_ms
 * (0 = none, as cron-parser treats a falsy date): *next_ms is the time, or
 * LN__CRON_NONE when there is none (past end_ms, or cron-parser's loop limit
 * of 10000 steps reached). Returns 0, or LN_EINVAL ("unknown time zone 'X'",
 * or a time outside a JavaScript Date's +-8.64e15 ms) / LN_ENOMEM with the
 * reason in err. Thread-safe: it opens its own ICU
 * calendar per call and closes it before returning. */
int ln__cron_next(const ln__cron *c, const char *tz, int64_t after_ms, int64_t start_ms,
                  int64_t end_ms, int64_t *next_ms, char *err, size_t errsize);

/* 0 when tz names a zone ln__cron_next accepts, else LN_EINVAL with the
 * reason in err. */
int ln__cron_check_tz(const char *tz, char *err, size_t errsize);

/* BullMQ's `every` step (its Lua getJobSchedulerEveryNextMillis): prev_ms is
 * the scheduler's current iteration time or LN__CRON_NONE for a new one;
 * offset and start_ms are 0 for none. Sets *next_ms and *offset_out. */
void ln__every_next(int64_t prev_ms, int64_t every, int64_t now_ms, int64_t offset,
                    int64_t start_ms, int64_t *next_ms, int64_t *offset_out);

/* A scheduler's options, as BullMQ stores them in repeat:<id>. */
typedef struct ln__sched_opts {
    int64_t every;        /* ms; > 0 for an `every` schedule, else 0 */
    const ln__cron *cron; /* the pattern when every == 0 */
    const char *tz;       /* pattern time zone; NULL: UTC */
    int64_t start_ms;     /* startDate, 0 = none */
    int64_t end_ms;       /* endDate, 0 = none */
    int64_t limit;        /* most iterations; < 0 = no limit */
    int64_t offset;       /* every: the stored offset, 0 = none */
    bool immediately;     /* pattern: the first iteration runs now */
} ln__sched_opts;

/* Where the scheduler stands. */
typedef struct ln__sched_prev {
    int64_t count;  /* iterations made so far (the `count` of the iteration
                     * being taken); 0 when the scheduler is being created */
    int64_t millis; /* time of the current iteration; LN__CRON_NONE: none */
} ln__sched_prev;

/* The next iteration of a scheduler, computed where and as BullMQ 6.7 does
 * it (upsertJobScheduler, and the Lua of addJobScheduler and
 * updateJobScheduler for `every`): *next_ms is the time of iteration
 * prev->count + 1, or LN__CRON_NONE when the scheduler is finished (limit
 * reached, now past the end date, or the pattern has no time left);
 * *offset_out is the `every` offset to store (0 for patterns). Returns 0,
 * or an error of ln__cron_next. */
int ln__sched_next(const ln__sched_opts *o, const ln__sched_prev *prev, int64_t now_ms,
                   int64_t *next_ms, int64_t *offset_out, char *err, size_t errsize);

#endif

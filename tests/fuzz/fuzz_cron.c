/* fuzz_cron.c - cron patterns, time zones and start times (src/jobs/model/cron.c,
 * cron_next.c) as a scheduler's options bring them in from outside.
 *
 * Input: "TZ<tab>AFTER_MS<tab>PATTERN[<tab>START_MS[<tab>END_MS]]", the
 * first three fields as in tests/cron/next_times.txt (its lines are the
 * seeds). A missing field is empty (TZ: UTC, numbers: 0).
 * Checks: parse returns 0 or LN_EINVAL with a terminated reason; next
 * returns within cron-parser's bounded loop, 0 or LN_EINVAL (bad zone);
 * a time found is strictly after AFTER_MS and a later START_MS, and not
 * after END_MS (when given); the scheduler step agrees. */
#include "fuzz_common.h"
#include "jobs/model/cron.h"
#include "lanes.h"

static int64_t num(const char *s) {
    return s != NULL ? strtoll(s, NULL, 10) : 0;
}

static int in_dates(int64_t t) {
    return t >= -8640000000000000 && t <= 8640000000000000;
}

static void check_next(const ln__cron *c, const char *tz, int64_t after, int64_t start,
                       int64_t end) {
    char err[256];
    int64_t t = 0;
    int rc = ln__cron_next(c, tz, after, start, end, &t, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == LN_EINVAL, "next rc %d", rc);
    FUZZ_CHECK(rc == 0 || fuzz_terminated(err, sizeof err), "err unterminated");
    if (rc != 0 || t == LN__CRON_NONE) return;
    FUZZ_CHECK(t > after, "next %lld not after %lld", (long long)t, (long long)after);
    /* cron-parser starts the search at startDate when it is later, and
     * next() never gives the time it starts from. */
    FUZZ_CHECK(start == 0 || start <= after || t > start, "next %lld not after start %lld",
               (long long)t, (long long)start);
    FUZZ_CHECK(end == 0 || t <= end, "next %lld after end %lld", (long long)t, (long long)end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = fuzz_cstr(data, size), *cur = buf;
    const char *tz = fuzz_field(&cur);
    int64_t after = num(fuzz_field(&cur));
    const char *pattern = fuzz_field(&cur);
    int64_t start = num(fuzz_field(&cur)), end = num(fuzz_field(&cur));
    if (pattern == NULL) pattern = "";
    ln__cron c;
    char err[256];
    int rc = ln__cron_parse(&c, pattern, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == LN_EINVAL, "parse rc %d", rc);
    FUZZ_CHECK(fuzz_terminated(err, sizeof err) || rc == 0, "parse err unterminated");
    if (rc == 0) {
        check_next(&c, tz, after, start, end);
        ln__sched_opts o = {.cron = &c, .tz = tz, .start_ms = start, .end_ms = end, .limit = -1};
        ln__sched_prev prev = {.count = 1, .millis = after};
        int64_t next = 0, offset = 0;
        rc = ln__sched_next(&o, &prev, after, &next, &offset, err, sizeof err);
        FUZZ_CHECK(rc == 0 || rc == LN_EINVAL, "sched rc %d", rc);
    }
    /* `every` arithmetic from the same numbers, in the domain a scheduler
     * admits (sched.c: every 1..2^40 ms, dates within a JavaScript Date's
     * range): no overflow (UBSan), and the next time is not before now. */
    int64_t every = end, next = 0, offset = 0;
    if (every > 0 && every <= (int64_t)1 << 40 && in_dates(after) && in_dates(start)) {
        ln__every_next(after, every, start, 0, start, &next, &offset);
        FUZZ_CHECK(next >= start, "every: %lld before now %lld", (long long)next, (long long)start);
    }
    free(buf);
    return 0;
}

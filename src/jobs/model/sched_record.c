/* sched_record.c - a job scheduler's records that every store shares: the
 * public record helpers of jobs.h, the iteration id "repeat:<id>:<ms>"
 * (BullMQ 6.7's) and the next fire time of a ln__sched_new (sched_record.h).
 * Part of the model: it calls only the cron code and the allocator.
 * docs/internals/schedules.md. */
#include "sched_record.h"

#include "internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ln_job_schedule_init(ln_job_schedule *s) {
    if (s != NULL) memset(s, 0, sizeof *s);
}

void ln_job_scheduler_clear(ln_job_scheduler *s) {
    if (s == NULL) return;
    ln__free(s->id);
    ln__free(s->name);
    ln__free(s->data);
    ln__free(s->pattern);
    ln__free(s->tz);
    memset(s, 0, sizeof *s);
}

void ln_job_scheduler_free_array(ln_job_scheduler *s, size_t n) {
    if (s == NULL) return;
    for (size_t i = 0; i < n; i++) ln_job_scheduler_clear(&s[i]);
    ln__free(s);
}

char *ln__sched_job_id(const char *sid, int64_t ms) {
    size_t n = strlen(sid) + LN__SCHED_ITER_PREFIX_LEN + 24;
    char *id = ln__malloc(n);
    if (id != NULL) snprintf(id, n, LN__SCHED_ITER_PREFIX "%s:%" PRId64, sid, ms);
    return id;
}

int ln__sched_parse_job_id(const char *id, const char **sid, size_t *sid_len, int64_t *ms) {
    if (strncmp(id, LN__SCHED_ITER_PREFIX, LN__SCHED_ITER_PREFIX_LEN) != 0) return 0;
    const char *colon = strrchr(id, ':');
    const char *digits = colon + 1;
    if (colon < id + LN__SCHED_ITER_PREFIX_LEN + 1 || *digits == '\0') return 0;
    int64_t v = 0;
    for (const char *p = digits; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10) return 0;
        v = v * 10 + (*p - '0');
    }
    *sid = id + LN__SCHED_ITER_PREFIX_LEN;
    *sid_len = (size_t)(colon - *sid);
    *ms = v;
    return 1;
}

int ln__sched_new_next(const ln__sched_new *s, int64_t count, int64_t prev_ms, int64_t now_ms,
                       int64_t offset, int64_t *next_ms, int64_t *offset_out, char *err,
                       size_t errsize) {
    ln__sched_opts o = {.every = s->every,
                        .cron = s->every > 0 ? NULL : &s->cron,
                        .tz = s->tz,
                        .start_ms = s->start_ms,
                        .end_ms = s->end_ms,
                        .limit = s->limit,
                        .offset = offset,
                        .immediately = s->immediately != 0};
    ln__sched_prev p = {.count = count, .millis = prev_ms};
    return ln__sched_next(&o, &p, now_ms, next_ms, offset_out, err, errsize);
}

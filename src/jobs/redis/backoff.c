/* backoff.c - a job's backoff as the Redis store writes it (BullMQ's
 * opts.backoff: {type, delay[, jitter]}) and reads it back from a view.
 * docs/internals/backoff.md. */
#include "redis_backoff.h"

#include "backoff.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ln__redis_args_backoff(ln__redis_args *a, const ln_job_opts *o) {
    /* Stored as given (BullMQ keeps any backoff a caller passes), so
     * ln_jobs_get reports it; only the default fixed/0 stays out. */
    int has = o->backoff != LN_BACKOFF_FIXED || o->backoff_ms != 0 || o->backoff_jitter > 0;
    ln__redis_args_str(a, !has                                   ? ""
                          : o->backoff == LN_BACKOFF_CUSTOM      ? o->backoff_type
                          : o->backoff == LN_BACKOFF_EXPONENTIAL ? "exponential"
                                                                 : "fixed");
    ln__redis_args_i64(a, o->backoff_ms); /* an owned copy: a _str is borrowed */
    if (!(o->backoff_jitter > 0) || a->oom) return;
    /* "<ms>:<jitter>" (lib.lua's backoff_opt) in place of that copy,
     * owned as it was. The jitter as jansson writes a real: with a '.'
     * whatever the program's LC_NUMERIC (printf's "%g" writes "0,5" in a
     * German locale, which Lua's tonumber reads as nil: jitter lost). */
    char num[40];
    json_t *j = json_real(o->backoff_jitter);
    size_t nl =
        j != NULL ? json_dumpb(j, num, sizeof num, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)) : 0;
    json_decref(j);
    char *spec = nl > 0 && nl < sizeof num ? ln__malloc(64) : NULL;
    if (spec == NULL) {
        a->oom = 1;
        return;
    }
    int n = snprintf(spec, 64, "%lld:%.*s", (long long)o->backoff_ms, (int)nl, num);
    LN_ASSERT(a->n > 0 && a->owned[a->n - 1] && n > 0 && n < 64);
    ln__free((void *)a->v[a->n - 1]);
    a->v[a->n - 1] = spec;
    a->len[a->n - 1] = (size_t)n;
}

json_t *ln__redis_backoff_json(const ln_job_opts *o) {
    if (o->backoff == LN_BACKOFF_FIXED && o->backoff_ms == 0 && !(o->backoff_jitter > 0))
        return NULL;
    json_t *b = json_pack("{s:s,s:I}", "type",
                          o->backoff == LN_BACKOFF_CUSTOM        ? o->backoff_type
                          : o->backoff == LN_BACKOFF_EXPONENTIAL ? "exponential"
                                                                 : "fixed",
                          "delay", (json_int_t)o->backoff_ms);
    if (b != NULL && o->backoff_jitter > 0)
        json_object_set_new(b, "jitter", json_real(o->backoff_jitter));
    return b;
}

int ln__redis_backoff_view(const redisReply *jitter, const redisReply *name, int *type,
                           double *jitter_out, char **name_out) {
    *jitter_out = 0;
    if (jitter->type == REDIS_REPLY_STRING) { /* Lua's tostring: a '.', read in any locale */
        json_t *j = json_loadb(jitter->str, jitter->len, JSON_DECODE_ANY, NULL);
        if (json_is_number(j)) *jitter_out = ln__backoff_clamp_jitter(json_number_value(j));
        json_decref(j);
    }
    *name_out = NULL;
    if (name->type != REDIS_REPLY_STRING) return 0;
    *type = LN_BACKOFF_CUSTOM;
    if ((*name_out = ln__malloc(name->len + 1)) == NULL) return LN_ENOMEM;
    memcpy(*name_out, name->str, name->len);
    (*name_out)[name->len] = '\0';
    return 0;
}

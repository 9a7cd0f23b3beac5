/* redis_step.c - step.lua's arguments and reply (see redis_step.h). */
#include "redis_step.h"

#include "internal.h"
#include "redis_view.h"

#include <inttypes.h>
#include <stdio.h>

void ln__redis_step_tokens(const char *base, uint64_t *seq, ln__redis_token *tokens, size_t n) {
    for (size_t i = 0; i < n; i++)
        snprintf(tokens[i], sizeof tokens[i], "%s:%" PRIu64, base, ++*seq);
}

void ln__redis_step_args(ln__redis_args *a, const ln__jobs_step *st, const char *worker,
                         const ln__redis_token *tokens) {
    ln__redis_args_i64(a, st->lease_ms);
    ln__redis_args_str(a, worker); /* stored as 'pb', BullMQ's processedBy */
    ln__redis_args_i64(a, (int64_t)st->ndone);
    ln__redis_args_i64(a, (int64_t)st->nrenew);
    ln__redis_args_i64(a, (int64_t)st->want);
    for (size_t i = 0; i < st->ndone; i++) {
        const ln__job_done *d = &st->done[i];
        ln__redis_args_str(a, d->ref.id);
        ln__redis_args_str(a, d->ref.token);
        ln__redis_args_str(a, d->kind == LN__DONE_COMPLETE ? "c"
                              : d->kind == LN__DONE_RETRY  ? "r"
                              : d->kind == LN__DONE_DELAY  ? "d"
                                                           : "f");
        ln__redis_args_str(a, d->kind == LN__DONE_COMPLETE ? (d->result ? d->result : "null")
                              : d->kind == LN__DONE_DELAY  ? ""
                                                           : d->reason);
        ln__redis_args_i64(a, d->kind == LN__DONE_RETRY   ? d->delay_ms
                              : d->kind == LN__DONE_DELAY ? d->run_at_ms
                                                          : 0);
        ln__redis_args_i64(a, (int64_t)d->ref.key); /* the take's finish hint */
    }
    for (size_t i = 0; i < st->nrenew; i++) {
        ln__redis_args_str(a, st->renew[i].id);
        ln__redis_args_str(a, st->renew[i].token);
    }
    for (size_t i = 0; i < st->want; i++) ln__redis_args_str(a, tokens[i]);
}

/* 0, or a leave_active code (LN__RC_*, redis_codes.h): not ours any more. */
static int stale_or_ok(int64_t code) {
    return code == 0 ? 0 : LN_ESTALE;
}

int ln__redis_step_reply(const redisReply *rep, ln__jobs_step *st, const ln__redis_token *tokens,
                         char *err, size_t err_size) {
    st->ntaken = 0;
    st->next_due_ms = -1;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 3 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY || rep->element[0]->elements != st->ndone ||
        rep->element[1]->type != REDIS_REPLY_ARRAY || rep->element[1]->elements != st->nrenew ||
        rep->elements - 3 > st->want) {
        snprintf(err, err_size, "redis: unexpected reply to step");
        return LN_EBACKEND;
    }
    for (size_t i = 0; i < st->ndone; i++)
        st->done[i].rc = stale_or_ok(ln__redis_int_at(rep->element[0], i));
    for (size_t i = 0; i < st->nrenew; i++)
        st->renew_rc[i] = ln__redis_int_at(rep->element[1], i) == 1 ? 0 : LN_ESTALE;
    st->next_due_ms = ln__redis_int_at(rep, 2);
    int rc = 0;
    for (size_t i = 3; i < rep->elements && !rc; i++) {
        if (!ln__redis_is_taken_view(rep->element[i])) {
            snprintf(err, err_size, "redis: unexpected reply to step");
            rc = LN_EBACKEND;
        } else if ((rc = ln__redis_view_taken(rep->element[i], tokens[i - 3],
                                              &st->taken[st->ntaken])) < 0) {
            snprintf(err, err_size, "out of memory");
        } else {
            st->ntaken++;
        }
    }
    if (rc) {
        for (size_t i = 0; i < st->ntaken; i++) ln__job_taken_free(&st->taken[i]);
        st->ntaken = 0;
    }
    return rc;
}

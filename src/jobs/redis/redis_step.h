/* redis_step.h - the worker round trip of the Redis backend (lua/step.lua)
 * as arguments and reply, shared by the synchronous step op (step.c) and
 * the pipelined one (pipe.c). Internal to src/jobs/redis/. */
#ifndef LN_JOBS_REDIS_STEP_H
#define LN_JOBS_REDIS_STEP_H

#include "backend.h"
#include "redis_conn.h"

typedef char ln__redis_token[LN__JOBS_TOKEN_MAX];

/* Lock tokens for a take: "<base>:<++*seq>" each, unique for every take
 * ever (base is 128 random bits in hex). */
void ln__redis_step_tokens(const char *base, uint64_t *seq, ln__redis_token *tokens, size_t n);

/* step.lua's ARGV for st (tokens: st->want of them; worker: processedBy). */
void ln__redis_step_args(ln__redis_args *a, const ln__jobs_step *st, const char *worker,
                         const ln__redis_token *tokens);

/* Fill st's outputs (done rcs, renew rcs, next due, taken jobs) from
 * step.lua's reply. 0, or LN_EBACKEND (malformed reply) / LN_ENOMEM with
 * the detail in err; then st->ntaken is 0 (jobs taken but not handed over
 * stay active with our lock until it lapses; the stalled check gives them
 * back). Does not free rep. */
int ln__redis_step_reply(const redisReply *rep, ln__jobs_step *st, const ln__redis_token *tokens,
                         char *err, size_t err_size);

#endif

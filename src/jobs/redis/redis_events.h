/* redis_events.h - the Redis backend's follower of a queue's events
 * (backend.h's events methods): XREAD BLOCK on <prefix>:<queue>:events, on
 * a connection of its own. Internal to src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_EVENTS_H
#define LN_JOBS_REDIS_EVENTS_H

#include "backend.h"
#include "redis_conn.h"

/* A follower of the stream "<base>events" (base: "<prefix>:<queue>:")
 * from 'from' (NULL or "$": after the newest entry now, read before this
 * returns, so it connects; "0" or a stream id: after that). cfg is
 * borrowed: the handle outlives the follower (jobs.h). 0, LN_EINVAL (a bad
 * from), LN_ENOMEM or a connection error, with the detail in err. */
int ln__redis_events_open(const ln__redis_cfg *cfg, const char *base, const char *from,
                          ln__jobs_events **out, char *err, size_t err_size);

#endif

/* redis_edit.h - jobs_edit.h on the Redis backend (redis_edit.c, store
 * methods version 17; docs/internals/edit.md). Internal to
 * src/jobs/redis*.c; not API. */
#ifndef LN_JOBS_REDIS_EDIT_H
#define LN_JOBS_REDIS_EDIT_H

#include "backend.h"
#include "redis_conn.h"

/* backend.h's edit on connection c for the queue whose key base is base
 * ("<prefix>:<queue>:", already routed); failures are described in be's
 * errmsg. */
int ln__redis_edit(ln__redis_conn *c, const char *base, ln__jobs_be *be, const char *queue,
                   ln__jobs_edit *e);

#endif

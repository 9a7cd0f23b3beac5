/* redis_workers.h - the workers of a queue on Redis (workers.c): the name
 * a worker run gives its connection, and the parser of CLIENT LIST's reply
 * (the method itself: redis_int.h). Internal to src/jobs/redis/; not API. */
#ifndef LN_JOBS_REDIS_WORKERS_H
#define LN_JOBS_REDIS_WORKERS_H

#include "backend.h"
#include "redis_conn.h"

/* The client name of a worker of the queue whose key base is base
 * ("<prefix>:<queue>:"), as BullMQ names a worker's connection:
 * "<prefix>:<base64(queue)>:w:<worker>". ln__malloc'd; NULL without
 * memory or for a base not under prefix. */
char *ln__redis_worker_name(const char *prefix, const char *base, const char *worker);

/* Parse the text of a CLIENT LIST reply (len bytes, lines of "k=v" fields
 * separated by spaces) and append to *out (capacity *cap, *n used; grown
 * with ln__realloc) every client named "<want>" or "<want>:w:<name>", at
 * most max in all; now_ms is the server's clock (for started_ms and
 * seen_ms). 0 or LN_ENOMEM (what was appended stays, for the caller to
 * free). Pure: no I/O. */
int ln__redis_parse_clients(const char *text, size_t len, const char *want, int64_t now_ms,
                            size_t max, ln_worker_info **out, size_t *n, size_t *cap);

#endif

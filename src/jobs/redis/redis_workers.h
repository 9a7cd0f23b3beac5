/* redis_workers.h - the workers of a queue on Redis (redis_workers.c): the
 * name a worker run gives its connection, and the listing by CLIENT LIST.
 * Internal to src/jobs/redis*.c; not API. */
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

/* The workers of queue on connection c (routed to the queue's slot by
 * the caller on a cluster): CLIENT LIST, then TIME for the clock. Errors
 * as ln__redis_command; LN_EBACKEND for an unexpected reply (detail in
 * be's errmsg). */
int ln__redis_workers(ln__redis_conn *c, const char *prefix, const char *queue, ln__jobs_be *be,
                      size_t max, ln_worker_info **out, size_t *n);

#endif

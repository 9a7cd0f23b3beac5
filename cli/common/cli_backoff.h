/* cli_backoff.h - a job's backoff on the `lanes` command line (--backoff
 * of add and schedule) and in a flow file's opts.backoff: one rule. */
#ifndef CLI_BACKOFF_H
#define CLI_BACKOFF_H

#include <lanes/jobs.h>

#include <jansson.h>

#include <stddef.h>

/* What --backoff takes, for usage messages and help. */
#define CLI_BACKOFF_FORM "TYPE:MS[:JITTER]"
#define CLI_BACKOFF_HELP "TYPE fixed, exponential or a custom type's name; JITTER 0..1"

/* --backoff s into o: TYPE:MS or TYPE:MS:JITTER. A custom TYPE (not
 * "fixed" or "exponential") is copied into type_buf (type_size bytes) and
 * o->backoff_type points there. 0, or -1 when s is not of that form (the
 * library checks the ranges). */
int cli_backoff_parse(const char *s, ln_job_opts *o, char *type_buf, size_t type_size);

/* A flow file's opts.backoff (BullMQ's form): MS, or {"type": T, "delay":
 * MS, "jitter": J} (delay and jitter optional). T any string: fixed,
 * exponential or a custom type (o->backoff_type then points into v,
 * which must outlive o). 0, or -1 for anything else. */
int cli_backoff_json(const json_t *v, ln_job_opts *o);

#endif

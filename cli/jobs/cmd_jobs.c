/* cmd_jobs.c - `lanes jobs URL COMMAND ...`: add jobs and administer queues
 * of a durable job store from the shell, with --json output for scripts. */
#include "cli.h"
#include "cli_backoff.h"
#include "cli_err.h"
#include "cli_num.h"
#include "cli_opts.h"
#include "jobs_cancel.h"
#include "jobs_edit.h"
#include "jobs_flow.h"
#include "jobs_help.h"
#include "jobs_workers.h"
#include "jobs_metrics.h"
#include "jobs_schedule.h"
#include "jobs_store.h"
#include "jobs_ratelimit.h"
#include "store_url.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct args {
    const cli_jobs_cmd *cmd;
    const char *pos[4]; /* positional arguments after the command */
    int npos;
    int json, all, lifo, create, dedup_extend, dedup_replace, follow, children;
    int dedup_keep_last, dedup_reschedule;
    const char *dedup;
    const char *delay, *priority, *attempts, *backoff, *id, *limit, *offset, *age, *keep,
        *traceparent, *on_complete, *on_fail, *timeout, *from, *type;
    const char *parent, *parent_on_failure; /* add --parent (jobs_flow.c) */
    int unprocessed;                        /* remove --unprocessed-children */
    int force;                              /* obliterate --force */
    const char *state, *before;             /* retry --state, --before */
    const char *wait_replicas;              /* add, flow --wait-replicas */
    const char *after;                      /* list --after */
    int full;                               /* check --full */
} args;

/* "lanes jobs" or "lanes jobs CMD": who speaks in messages. */
static char prog[64] = "lanes jobs";

#define AT(member) offsetof(args, member)

/* The options of the subcommands this file runs (jobs_help.c describes
 * them); rate-limit and concurrency have their own (jobs_ratelimit.c). */
static const cli_opt options[] = {
    CLI_OPTS_EVERY(args),
    {"--delay", 1, AT(delay), "add"},
    {"--priority", 1, AT(priority), "add"},
    {"--attempts", 1, AT(attempts), "add"},
    {"--backoff", 1, AT(backoff), "add"},
    {"--id", 1, AT(id), "add"},
    {"--lifo", 0, AT(lifo), "add"},
    {"--traceparent", 1, AT(traceparent), "add"},
    {"--remove-on-complete", 1, AT(on_complete), "add"},
    {"--remove-on-fail", 1, AT(on_fail), "add"},
    {"--dedup", 1, AT(dedup), "add"},
    {"--dedup-extend", 0, AT(dedup_extend), "add"},
    {"--dedup-replace", 0, AT(dedup_replace), "add"},
    {"--dedup-keep-last", 0, AT(dedup_keep_last), "add"},
    {"--dedup-reschedule", 0, AT(dedup_reschedule), "add"},
    {"--parent", 1, AT(parent), "add"},
    {"--parent-on-failure", 1, AT(parent_on_failure), "add"},
    {"--limit", 1, AT(limit), "list"},
    {"--offset", 1, AT(offset), "list"},
    {"--after", 1, AT(after), "list"},
    {"--full", 0, AT(full), "check"},
    {"--all", 0, AT(all), "retry"},
    {"--state", 1, AT(state), "retry"},
    {"--before", 1, AT(before), "retry"},
    {"--children", 0, AT(children), "remove"},
    {"--age", 1, AT(age), "clean"},
    {"--keep", 1, AT(keep), "clean"},
    {"--timeout", 1, AT(timeout), "wait"},
    {"--follow", 0, AT(follow), "events"},
    {"--from", 1, AT(from), "events"},
    {"--type", 1, AT(type), "metrics"},
    {"--unprocessed-children", 0, AT(unprocessed), "remove"},
    {"--force", 0, AT(force), "obliterate"},
    {"--wait-replicas", 1, AT(wait_replicas), "add flow"},
    CLI_OPTS_END,
};

/* The library's error err of command what, on stderr; its exit code (the
 * table of cli_jobs_exit). */
static int fail(ln_jobs *jobs, const char *what, int err) {
    snprintf(prog, sizeof prog, "lanes jobs %s", what);
    return cli_jobs_fail(jobs, prog, err);
}

/* All of stdin as a string (malloc'd) and its length in *len (the text
 * may hold NUL bytes: the caller checks), or NULL. At most 1 GiB is read;
 * the store's own size limit is checked by ln_jobs_add. */
static char *read_stdin(size_t *lenp) {
    size_t len = 0, cap = 1 << 16;
    char *p = malloc(cap);
    while (p != NULL) {
        size_t n = fread(p + len, 1, cap - len - 1, stdin);
        len += n;
        if (n == 0) break;
        if (len + 1 == cap) {
            char *q = cap < (1u << 30) ? realloc(p, cap * 2) : NULL;
            if (q == NULL) free(p);
            p = q;
            cap *= 2;
        }
    }
    if (p == NULL || ferror(stdin)) {
        free(p);
        return NULL;
    }
    p[len] = '\0';
    *lenp = len;
    return p;
}

static int cmd_add(ln_jobs *jobs, args *a) {
    if (a->npos < 2 || a->npos > 3) return cli_usage(prog, "%s", "add needs QUEUE NAME [JSON]");
    ln_job_opts o;
    ln_job_opts_init(&o);
    long long v;
    if (a->delay && cli_parse_ll(a->delay, -(1LL << 62), 1LL << 62, &v) < 0)
        return cli_usage(prog, "--delay '%s' is not a number of ms", a->delay);
    if (a->delay) o.delay_ms = v;
    if (a->priority && cli_parse_ll(a->priority, -(1LL << 30), 1LL << 30, &v) < 0)
        return cli_usage(prog, "--priority '%s' is not a number", a->priority);
    if (a->priority) o.priority = (int)v;
    if (a->attempts && cli_parse_ll(a->attempts, -(1LL << 30), 1LL << 30, &v) < 0)
        return cli_usage(prog, "--attempts '%s' is not a number", a->attempts);
    if (a->attempts) o.attempts = (int)v;
    static char btype[LN_BACKOFF_TYPE_MAX]; /* a custom type's name */
    if (a->backoff && cli_backoff_parse(a->backoff, &o, btype, sizeof btype) < 0)
        return cli_usage(prog, "--backoff '%s': use " CLI_BACKOFF_FORM " (%s)", a->backoff,
                         CLI_BACKOFF_HELP);
    if (a->on_complete && cli_parse_keep(a->on_complete, 0, &o.remove_on_complete))
        return cli_usage(prog, "--remove-on-complete '%s': none, all, keep:N or age:S",
                         a->on_complete);
    if (a->on_fail && cli_parse_keep(a->on_fail, 0, &o.remove_on_fail))
        return cli_usage(prog, "--remove-on-fail '%s': none, all, keep:N or age:S", a->on_fail);
    static char deid[LN_JOB_CUSTOM_ID_MAX]; /* static: 64 KiB, one add a run */
    if (a->dedup) {                         /* ID[:TTL_MS]: the TTL after the last ':' */
        const char *colon = strrchr(a->dedup, ':');
        size_t n = colon ? (size_t)(colon - a->dedup) : strlen(a->dedup);
        if (colon && cli_parse_ll(colon + 1, 0, INT32_MAX, &v) < 0)
            return cli_usage(prog, "--dedup '%s': use ID or ID:TTL_MS", a->dedup);
        if (n == 0 || n >= sizeof deid)
            return cli_usage(prog, "--dedup '%.200s': the id must be 1..%d bytes", a->dedup,
                             LN_JOB_CUSTOM_ID_MAX - 1);
        memcpy(deid, a->dedup, n);
        deid[n] = '\0';
        o.dedup_id = deid;
        o.dedup_ttl_ms = colon ? v : 0;
    } else if (a->dedup_extend || a->dedup_replace || a->dedup_keep_last || a->dedup_reschedule) {
        return cli_usage(prog, "%s",
                         "--dedup-extend, --dedup-replace, --dedup-keep-last and "
                         "--dedup-reschedule need --dedup ID[:TTL_MS]");
    }
    o.dedup_extend = a->dedup_extend;
    o.dedup_replace = a->dedup_replace;
    o.dedup_keep_last_if_active = a->dedup_keep_last;
    o.dedup_reschedule = a->dedup_reschedule;
    o.job_id = a->id;
    o.lifo = a->lifo;
    o.traceparent = a->traceparent;
    static char pq[LN_JOB_QUEUE_MAX]; /* --parent's queue */
    if (cli_jobs_parent_opt(a->parent, a->parent_on_failure, &o, pq, sizeof pq) != 0)
        return cli_usage(prog, "%s",
                         "--parent QUEUE:ID [--parent-on-failure fail|continue|"
                         "ignore|remove]");
    static char id[LN_JOB_CUSTOM_ID_MAX]; /* any custom id or dedup holder */
    char *input = NULL;
    const char *data = a->npos == 3 ? a->pos[2] : NULL;
    if (data != NULL && strcmp(data, "-") == 0) {
        size_t len;
        if ((input = read_stdin(&len)) == NULL)
            return cli_error(CLI_EXIT_FAILURE, prog, "LN_EIO", NULL,
                             "cannot read the data from stdin");
        /* The data is a C string from here on: a NUL byte would silently
         * cut it short, so refuse it (JSON text never holds one; a NUL
         * inside a string is written \u0000). */
        const char *nul = memchr(input, '\0', len);
        if (nul != NULL) {
            size_t at = (size_t)(nul - input);
            free(input);
            return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL,
                             "the data on stdin contains a NUL byte (at byte %zu); "
                             "job data must be JSON text",
                             at);
        }
        /* `echo '{...}' | lanes jobs URL add q n -` means the JSON, not the
         * newline echo ends it with: drop exactly one trailing "\n" or
         * "\r\n" (docs/cli.md); anything else is kept as it came. */
        if (len > 0 && input[len - 1] == '\n') {
            len--;
            if (len > 0 && input[len - 1] == '\r') len--;
            input[len] = '\0';
        }
        data = input;
    }
    int err = ln_jobs_add(jobs, a->pos[0], a->pos[1], data, &o, id, sizeof id);
    free(input);
    if (err != 0) return fail(jobs, "add", err);
    if (a->json)
        cli_jobs_print_json(json_pack("{s:o}", "id", cli_json_text(id)));
    else
        puts(id);
    return CLI_EXIT_OK;
}

static int cmd_counts(ln_jobs *jobs, args *a) {
    if (a->npos != 1) return cli_usage(prog, "%s", "counts needs QUEUE");
    ln_job_counts c;
    int err = ln_jobs_counts(jobs, a->pos[0], &c);
    if (err != 0) return fail(jobs, "counts", err);
    const char *names[] = {"waiting",   "delayed", "prioritized", "active",
                           "completed", "failed",  "paused",      "waiting-children"};
    uint64_t vals[] = {c.waiting,   c.delayed, c.prioritized, c.active,
                       c.completed, c.failed,  c.paused,      c.waiting_children};
    json_t *o = a->json ? json_object() : NULL;
    for (int i = 0; i < 8; i++) {
        if (o != NULL)
            json_object_set_new(o, names[i], json_integer((json_int_t)vals[i]));
        else
            printf("%-16s %llu\n", names[i], (unsigned long long)vals[i]);
    }
    if (o != NULL) cli_jobs_print_json(o);
    return CLI_EXIT_OK;
}

static const char *backoff_name(int backoff) {
    return backoff == LN_BACKOFF_EXPONENTIAL ? "exponential" : "fixed";
}

/* The fields of a job jansson writes: all but data, result and progress
 * (print_info_json writes those as stored). */
static json_t *info_fields(const ln_job_info *i) {
    json_t *o = json_pack(
        "{s:o,s:s,s:o,s:i,s:b,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:I}", "id", cli_json_text(i->id),
        "state", ln_job_state_name(i->state), "name", cli_json_text(i->name), "priority",
        i->priority, "lifo", i->lifo, "attempts", i->attempts, "attempts_made", i->attempts_made,
        "attempts_started", i->attempts_started, "stalled", i->stalled, "created_ms",
        (json_int_t)i->created_ms, "run_at_ms", (json_int_t)i->run_at_ms, "started_ms",
        (json_int_t)i->started_ms, "finished_ms", (json_int_t)i->finished_ms);
    if (o == NULL) return NULL;
    json_object_set_new(o, "failed_reason", cli_json_text(i->failed_reason));
    json_object_set_new(o, "traceparent", cli_json_text(i->traceparent));
    /* As the dashboard's API names them: the type ("fixed", "exponential"
     * or a custom type's name), its delay and its jitter (0: none). */
    json_object_set_new(o, "backoff",
                        i->backoff == LN_BACKOFF_CUSTOM ? cli_json_text(i->backoff_type)
                                                        : json_string(backoff_name(i->backoff)));
    json_object_set_new(o, "backoff_ms", json_integer((json_int_t)i->backoff_ms));
    json_object_set_new(o, "backoff_jitter", json_real(i->backoff_jitter));
    return o;
}

/* A stored JSON text as a member value: as stored (jansson would turn
 * 100000000000000000000 or "\ud800" into something else), without the
 * whitespace around it; text that is not JSON as a JSON string. */
static void print_embedded(const char *key, const char *text) {
    printf(",\"%s\":", key);
    if (text == NULL) {
        fputs("null", stdout);
        return;
    }
    const char *ws = " \t\n\r";
    size_t skip = strspn(text, ws), len = strlen(text + skip);
    while (len > 0 && strchr(ws, text[skip + len - 1]) != NULL) len--;
    if (ln_jobs_json_valid(text + skip, len)) {
        fwrite(text + skip, 1, len, stdout);
        return;
    }
    json_t *s = cli_json_text(text);
    char *out = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    fputs(out ? out : "null", stdout);
    free(out);
    json_decref(s);
}

/* A job as one compact JSON object (no newline); with jobs, its flow
 * relations too (get). */
static void print_info_json_of(const ln_job_info *i, ln_jobs *jobs, const char *queue) {
    json_t *o = info_fields(i);
    char *fields = o ? json_dumps(o, JSON_COMPACT | JSON_EMBED) : NULL;
    json_decref(o);
    printf("{%s", fields ? fields : "\"id\":null");
    free(fields);
    print_embedded("data", i->data);
    print_embedded("result", i->result);
    print_embedded("progress", i->progress);
    if (jobs != NULL) cli_jobs_flow_relations(jobs, queue, i->id, 1);
    putchar('}');
}

static void print_info_json(const ln_job_info *i) {
    print_info_json_of(i, NULL, NULL);
}

static void print_info_text(const ln_job_info *i, int full) {
    if (!full) {
        printf("%-20s %-11s %-20s %s\n", i->id, ln_job_state_name(i->state), i->name, i->data);
        return;
    }
    printf("id           %s\nstate        %s\nname         %s\ndata         %s\n"
           "priority     %d\nattempts     %d made, %d started, %d allowed\n"
           "stalled      %d\n",
           i->id, ln_job_state_name(i->state), i->name, i->data, i->priority, i->attempts_made,
           i->attempts_started, i->attempts, i->stalled);
    if (i->result) printf("result       %s\n", i->result);
    if (i->failed_reason) printf("failed       %s\n", i->failed_reason);
    if (i->progress) printf("progress     %s\n", i->progress);
    if (i->traceparent) printf("traceparent  %s\n", i->traceparent);
    if (i->backoff != LN_BACKOFF_FIXED || i->backoff_ms != 0 || i->backoff_jitter > 0)
        printf("backoff      %s %lld ms, jitter %g\n",
               i->backoff == LN_BACKOFF_CUSTOM ? (i->backoff_type ? i->backoff_type : "custom")
                                               : backoff_name(i->backoff),
               (long long)i->backoff_ms, i->backoff_jitter);
}

static int cmd_get(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return cli_usage(prog, "%s", "get needs QUEUE ID");
    ln_job_info info;
    int err = ln_jobs_get(jobs, a->pos[0], a->pos[1], &info);
    if (err != 0) return fail(jobs, "get", err);
    if (a->json) {
        print_info_json_of(&info, jobs, a->pos[0]);
        putchar('\n');
    } else {
        print_info_text(&info, 1);
        cli_jobs_flow_relations(jobs, a->pos[0], a->pos[1], 0);
    }
    ln_job_info_clear(&info);
    return CLI_EXIT_OK;
}

/* A full page: if a job follows its last row (cursor), say so on stderr
 * with the --after and --offset of the next page (stdout stays the list,
 * parseable). The look past the page is a cursor's: it costs the same at
 * any depth. */
static void more_notice(ln_jobs *jobs, const char *queue, int state, const char *cursor,
                        long long shown, long long next) {
    ln_job_info *infos;
    size_t n;
    if (ln_jobs_list_after(jobs, queue, state, cursor, 1, &infos, &n) != 0) return;
    ln_job_info_free_array(infos, n);
    if (n == 0) return;
    if (cli_err_is_json()) {
        json_t *v =
            json_pack("{s:b,s:I,s:s}", "more", 1, "shown", (json_int_t)shown, "next_after", cursor);
        if (v != NULL && next >= 0) json_object_set_new(v, "next_offset", json_integer(next));
        char *text = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
        if (text != NULL) fprintf(stderr, "%s\n", text);
        free(text);
        json_decref(v);
    } else if (next >= 0) {
        fprintf(stderr,
                "%s: %lld jobs shown (--limit %lld), more follow; next page: --offset %lld "
                "(or --after '%s', which costs the same at any depth)\n",
                prog, shown, shown, next, cursor);
    } else {
        fprintf(stderr,
                "%s: %lld jobs shown (--limit %lld), more follow; next page: --after '%s'\n", prog,
                shown, shown, cursor);
    }
}

static int cmd_list(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return cli_usage(prog, "%s", "list needs QUEUE STATE");
    int state = ln_job_state_parse(a->pos[1]);
    if (state < 0) return cli_usage(prog, "unknown state '%s'", a->pos[1]);
    long long limit = 100, offset = 0;
    if (a->limit && cli_parse_ll(a->limit, 1, 10000, &limit) < 0)
        return cli_usage(prog, "--limit '%s' must be 1..10000", a->limit);
    if (a->offset && cli_parse_ll(a->offset, 0, 1LL << 62, &offset) < 0)
        return cli_usage(prog, "--offset '%s' must be >= 0", a->offset);
    if (a->offset && a->after) return cli_usage(prog, "%s", "give --offset or --after, not both");
    ln_job_info *infos;
    size_t n;
    int err = a->after != NULL
                  ? ln_jobs_list_after(jobs, a->pos[0], state, a->after, (size_t)limit, &infos, &n)
                  : ln_jobs_list(jobs, a->pos[0], state, (size_t)offset, (size_t)limit, &infos, &n);
    if (err != 0) return fail(jobs, "list", err);
    if (a->json) putchar('[');
    for (size_t i = 0; i < n; i++) {
        if (a->json) {
            if (i > 0) putchar(',');
            print_info_json(&infos[i]);
        } else {
            print_info_text(&infos[i], 0);
        }
    }
    if (a->json) puts("]");
    if (n == (size_t)limit && infos[n - 1].cursor != NULL)
        more_notice(jobs, a->pos[0], state, infos[n - 1].cursor, limit,
                    a->after != NULL ? -1 : offset + limit);
    ln_job_info_free_array(infos, n);
    return CLI_EXIT_OK;
}

/* Check the store's structure (ln_jobs_check): "ok", or the damage found
 * (exit code of LN_ECORRUPT). */
static int cmd_check(ln_jobs *jobs, args *a) {
    if (a->npos != 0) return cli_usage(prog, "%s", "check takes no arguments");
    int err = ln_jobs_check(jobs, a->full);
    if (err != 0) return fail(jobs, "check", err);
    if (a->json)
        puts("{\"ok\":true}");
    else
        puts("ok");
    return CLI_EXIT_OK;
}

static int cmd_logs(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return cli_usage(prog, "%s", "logs needs QUEUE ID");
    char **lines;
    size_t n;
    int err = ln_jobs_logs(jobs, a->pos[0], a->pos[1], &lines, &n);
    if (err != 0) return fail(jobs, "logs", err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (a->json)
            json_array_append_new(arr, cli_json_text(lines[i]));
        else
            puts(lines[i]);
    }
    if (a->json)
        cli_jobs_print_json(arr);
    else
        json_decref(arr);
    ln_jobs_free_lines(lines, n);
    return CLI_EXIT_OK;
}

static int cmd_wait(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return cli_usage(prog, "%s", "wait needs QUEUE ID");
    int64_t timeout_ms = -1;
    if (a->timeout) {
        char *end;
        double secs = strtod(a->timeout, &end);
        if (end == a->timeout || *end != '\0' || !(secs >= 0 && secs <= 1e9))
            return cli_usage(prog, "--timeout '%s' must be seconds >= 0", a->timeout);
        timeout_ms = (int64_t)(secs * 1000.0 + 0.5);
    }
    ln_job_info info;
    int err = ln_jobs_wait(jobs, a->pos[0], a->pos[1], timeout_ms, &info);
    if (err == LN_ETIMEDOUT) { /* documented: the timeout passed, not a failure */
        fail(jobs, "wait", err);
        return CLI_JOBS_EXIT_TIMEOUT;
    }
    if (err != 0) return fail(jobs, "wait", err);
    int done = info.state == LN_JOB_COMPLETED;
    if (a->json) {
        print_info_json(&info);
        putchar('\n');
    } else if (done) {
        puts(info.result != NULL ? info.result : "null");
    } else {
        fprintf(stderr, "%s\n", info.failed_reason != NULL ? info.failed_reason : "failed");
    }
    ln_job_info_clear(&info);
    return done ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

static volatile sig_atomic_t events_stop;

static void on_stop_signal(int sig) {
    (void)sig;
    events_stop = 1;
}

/* One event as a line: "ID NAME JOBID FIELDS", or a JSON object. */
static void print_event(const ln_job_event *e, int json) {
    if (!json) {
        printf("%s %s %s %s\n", e->id, e->name, e->job_id[0] ? e->job_id : "-",
               e->fields != NULL ? e->fields : "{}");
    } else {
        json_t *f = json_loads(e->fields != NULL ? e->fields : "{}", 0, NULL);
        json_t *v = json_pack("{s:s,s:o,s:o,s:I,s:o}", "id", e->id, "event", cli_json_text(e->name),
                              "jobId", cli_json_text(e->job_id[0] ? e->job_id : NULL), "at",
                              (json_int_t)e->at_ms, "fields", f != NULL ? f : json_object());
        if (v != NULL) cli_jobs_print_json(v);
    }
    fflush(stdout);
}

static int cmd_events(ln_jobs *jobs, args *a) {
    if (a->npos != 1) return cli_usage(prog, "%s", "events needs QUEUE");
    const char *from = a->from != NULL ? a->from : a->follow ? "$" : "0";
    ln_jobs_events *ev;
    int err = ln_jobs_events_open(jobs, a->pos[0], from, &ev);
    if (err != 0) return fail(jobs, "events", err);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    while (!events_stop) {
        ln_job_event e;
        /* Following: short waits, so a signal ends it within half a second. */
        err = ln_jobs_events_next(ev, a->follow ? 500 : 0, &e);
        if (err == LN_ETIMEDOUT) {
            err = 0;
            if (a->follow) continue;
            break;
        }
        if (err != 0) break;
        print_event(&e, a->json);
        ln_job_event_clear(&e);
    }
    int rc = CLI_EXIT_OK;
    if (err != 0) {
        snprintf(prog, sizeof prog, "lanes jobs events");
        rc = cli_jobs_error(cli_jobs_exit(err), prog, err, ln_jobs_events_errmsg(ev));
    }
    ln_jobs_events_close(ev);
    return rc;
}

/* retry QUEUE ID | QUEUE --all [--state STATE] [--before MS]: 0 or an LN_E*
 * code of the library, or the exit code of a usage error (> 0). */
static int retry(ln_jobs *jobs, const args *a, size_t *count) {
    if (a->npos != (a->all ? 1 : 2))
        return cli_usage(prog, "%s", "retry needs QUEUE ID or QUEUE --all");
    int state = a->state ? ln_job_state_parse(a->state) : LN_JOB_FAILED;
    if (state != LN_JOB_COMPLETED && state != LN_JOB_FAILED)
        return cli_usage(prog, "retry: --state '%s' must be completed or failed", a->state);
    long long before = -1;
    if (a->before && (!a->all || cli_parse_ll(a->before, 0, 1LL << 53, &before) < 0))
        return cli_usage(prog, "--before '%s' must be ms since the epoch, with --all", a->before);
    if (a->all) return ln_jobs_retry_all_finished(jobs, a->pos[0], state, before, count);
    return ln_jobs_retry_finished(jobs, a->pos[0], a->pos[1], state);
}

/* retry, remove, clean, pause, resume, drain, obliterate: an action and a
 * count. */
static int cmd_action(ln_jobs *jobs, const char *cmd, args *a) {
    int err;
    size_t count = 1;
    if (strcmp(cmd, "retry") == 0) {
        if ((err = retry(jobs, a, &count)) > 0) return err; /* a usage error */
    } else if (strcmp(cmd, "remove") == 0) {
        if (a->npos != 2) return cli_usage(prog, "%s", "remove needs QUEUE ID");
        if (a->children && a->unprocessed)
            return cli_usage(prog, "%s",
                             "--children and --unprocessed-children exclude each other");
        err = a->unprocessed
                  ? ln_jobs_remove_unprocessed_children(jobs, a->pos[0], a->pos[1], &count)
              : a->children ? ln_jobs_remove_tree(jobs, a->pos[0], a->pos[1], &count)
                            : ln_jobs_remove(jobs, a->pos[0], a->pos[1]);
    } else if (strcmp(cmd, "clean") == 0) {
        if (a->npos != 2) return cli_usage(prog, "%s", "clean needs QUEUE STATE");
        int state = ln_job_state_parse(a->pos[1]);
        if (state != LN_JOB_COMPLETED && state != LN_JOB_FAILED)
            return cli_usage(prog, "clean: state '%s' must be completed or failed", a->pos[1]);
        long long age = -1, keep = 0;
        if (a->age && cli_parse_ll(a->age, 0, 1LL << 40, &age) < 0)
            return cli_usage(prog, "--age '%s' must be seconds >= 0", a->age);
        if (a->keep && cli_parse_ll(a->keep, 0, 1LL << 62, &keep) < 0)
            return cli_usage(prog, "--keep '%s' must be >= 0", a->keep);
        err = ln_jobs_clean(jobs, a->pos[0], state, age < 0 ? -1 : age * 1000, (uint64_t)keep,
                            &count);
    } else if (strcmp(cmd, "drain") == 0) {
        if (a->npos != 1) return cli_usage(prog, "%s", "drain needs QUEUE");
        err = ln_jobs_drain(jobs, a->pos[0], &count);
    } else if (strcmp(cmd, "obliterate") == 0) {
        if (a->npos != 1) return cli_usage(prog, "%s", "obliterate needs QUEUE");
        err = ln_jobs_obliterate(jobs, a->pos[0], a->force, &count);
    } else { /* pause, resume */
        if (a->npos != 1) return cli_usage(prog, "%s needs QUEUE", cmd);
        err = strcmp(cmd, "pause") == 0 ? ln_jobs_pause(jobs, a->pos[0])
                                        : ln_jobs_resume(jobs, a->pos[0]);
    }
    if (err != 0) return fail(jobs, cmd, err);
    if (a->json)
        cli_jobs_print_json(json_pack("{s:b,s:I}", "ok", 1, "count", (json_int_t)count));
    else if (strcmp(cmd, "pause") != 0 && strcmp(cmd, "resume") != 0)
        printf("%zu\n", count);
    return CLI_EXIT_OK;
}

/* Only add, flow, schedule (jobs_schedule.c) and --create make a new
 * sqlite: store: a mistyped PATH is refused rather than silently becoming
 * an empty store (store_url.h). */
static int check_store_exists(const char *url, const args *a) {
    if (a->create || strcmp(a->cmd->name, "add") == 0 || strcmp(a->cmd->name, "flow") == 0)
        return 0;
    return cli_check_store_exists(prog, url, "add --create, or add a job, to make one");
}

/* --wait-replicas N: the Redis URL's wait_replicas parameter (jobs.h
 * ln_jobs_opts.wait_replicas: WAIT for N replicas after the add), into
 * out (size bytes). 0, or a usage error: N out of range, or a store that
 * is not Redis (a sqlite: store commits to its file before it answers). */
static int url_with_wait(const char *url, const args *a, char *out, size_t size) {
    long long n = 0;
    if (cli_parse_ll(a->wait_replicas, 0, 64, &n) < 0)
        return cli_usage(prog, "--wait-replicas must be 0..64, not '%s'", a->wait_replicas);
    if (strncmp(url, "redis://", 8) != 0 && strncmp(url, "unix:", 5) != 0)
        return cli_usage(prog, "%s", "--wait-replicas applies to a Redis store (redis://, unix:)");
    if ((size_t)snprintf(out, size, "%s%cwait_replicas=%lld", url, strchr(url, '?') ? '&' : '?',
                         n) >= size)
        return cli_usage(prog, "%s", "the store URL is too long");
    return 0;
}

/* --help anywhere: `lanes jobs --help`, `lanes jobs URL --help`, `lanes
 * jobs URL CMD ... --help` or `lanes jobs CMD --help` print the usage to
 * stdout. 1 if it did. */
static int help_asked(int argc, char **argv) {
    if (!cli_opts_help_asked(argc, argv)) return 0;
    const cli_jobs_cmd *c = argc > 2 ? cli_jobs_cmd_find(argv[2]) : NULL;
    if (c == NULL && argc > 1) c = cli_jobs_cmd_find(argv[1]);
    if (c != NULL)
        cli_jobs_cmd_usage(stdout, c);
    else
        cli_jobs_usage(stdout);
    return 1;
}

int cmd_jobs(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0) cli_err_json(1);
    int max_rc = cli_jobs_take_max_data_size(prog, &argc, argv);
    if (max_rc != 0) return max_rc;
    int sched_rc = cli_jobs_schedule(argc, argv); /* schedule, unschedule, schedules */
    if (sched_rc >= 0) return sched_rc;
    if (help_asked(argc, argv)) return CLI_EXIT_OK;
    if (argc < 3) {
        if (cli_err_is_json())
            return cli_usage(prog, "%s", "usage: lanes jobs URL COMMAND [ARGS] [--json]");
        cli_jobs_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (cli_jobs_limits_is(argv[2])) return cli_jobs_limits_main(argc, argv); /* jobs_ratelimit.c */
    if (cli_jobs_edit_is(argv[2])) return cli_jobs_edit_main(argc, argv);     /* jobs_edit.c */
    const char *url = argv[1];
    args a;
    memset(&a, 0, sizeof a);
    a.cmd = cli_jobs_cmd_find(argv[2]);
    if (a.cmd == NULL) return cli_usage(prog, "unknown command '%s'", argv[2]);
    snprintf(prog, sizeof prog, "lanes jobs %s", a.cmd->name);
    cli_cmdline cl = {options, a.cmd->name, prog, 4};
    int rc = cli_opts_parse(&cl, argc - 3, argv + 3, &a, a.pos, &a.npos);
    if (rc == 0) rc = check_store_exists(url, &a);
    char waiting_url[4096];
    if (rc == 0 && a.wait_replicas != NULL &&
        (rc = url_with_wait(url, &a, waiting_url, sizeof waiting_url)) == 0)
        url = waiting_url;
    if (rc != 0) return rc;
    ln_jobs *jobs;
    if ((rc = cli_jobs_open(prog, url, &jobs)) != 0) return rc;
    const char *cmd = a.cmd->name;
    if (strcmp(cmd, "add") == 0)
        rc = cmd_add(jobs, &a);
    else if (strcmp(cmd, "counts") == 0)
        rc = cmd_counts(jobs, &a);
    else if (strcmp(cmd, "list") == 0)
        rc = cmd_list(jobs, &a);
    else if (strcmp(cmd, "check") == 0)
        rc = cmd_check(jobs, &a);
    else if (strcmp(cmd, "get") == 0)
        rc = cmd_get(jobs, &a);
    else if (strcmp(cmd, "logs") == 0)
        rc = cmd_logs(jobs, &a);
    else if (strcmp(cmd, "wait") == 0)
        rc = cmd_wait(jobs, &a);
    else if (strcmp(cmd, "events") == 0)
        rc = cmd_events(jobs, &a);
    else if (strcmp(cmd, "workers") == 0) /* jobs_workers.c */
        rc = a.npos != 1 ? cli_usage(prog, "%s", "workers needs QUEUE")
                         : cli_jobs_workers(jobs, prog, a.pos[0], a.json);
    else if (strcmp(cmd, "metrics") == 0)
        rc = cli_jobs_metrics(jobs, prog, a.pos, a.npos, a.type, a.json);
    else if (strcmp(cmd, "cancel") == 0) /* jobs_cancel.c */
        rc = cli_jobs_cancel(jobs, prog, a.pos, a.npos, a.json);
    else if (strcmp(cmd, "flow") == 0)
        rc = cli_jobs_flow(jobs, a.npos, a.pos, a.json);
    else
        rc = cmd_action(jobs, cmd, &a);
    ln_jobs_close(jobs);
    return rc;
}

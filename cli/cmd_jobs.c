/* cmd_jobs.c - `lanes jobs URL COMMAND ...`: add jobs and administer queues
 * of a durable job store from the shell, with --json output for scripts. */
#include "cli.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exit code for "no such job" (get/remove/retry/logs of an unknown id). */
#define EXIT_NOT_FOUND 4

static const char usage_text[] =
    "usage: lanes jobs URL COMMAND [ARGS] [--json]\n"
    "\n"
    "URL: sqlite:PATH[?sync=normal|full&busy_timeout=MS&reserve=BYTES],\n"
    "     e.g. sqlite:lanes.db, or redis://HOST:PORT/DB when built with\n"
    "     hiredis.\n"
    "\n"
    "commands:\n"
    "  add QUEUE NAME [JSON|-] [--delay MS] [--priority N] [--attempts N]\n"
    "      [--backoff fixed:MS|exponential:MS] [--id ID] [--lifo]\n"
    "      [--traceparent TP] [--remove-on-complete all|none|N|age:S]\n"
    "      [--remove-on-fail all|none|N|age:S]   prints the job id;\n"
    "      JSON '-' reads the data from stdin\n"
    "  counts QUEUE                      jobs per state\n"
    "  list QUEUE STATE [--limit N] [--offset N]\n"
    "      STATE: waiting delayed prioritized active completed failed paused\n"
    "  get QUEUE ID                      one job, all fields\n"
    "  logs QUEUE ID                     log lines a handler wrote\n"
    "  retry QUEUE ID|--all              failed job(s) back to waiting\n"
    "  remove QUEUE ID                   delete a job (not while active)\n"
    "  clean QUEUE completed|failed [--age S] [--keep N]\n"
    "  pause QUEUE | resume QUEUE        stop / restart taking jobs\n"
    "  drain QUEUE                       delete waiting and delayed jobs\n"
    "\n"
    "--json prints a JSON object (or array for list) instead of text.\n"
    "\n"
    "exit codes: 0 done; 1 the operation failed (e.g. job active);\n"
    "  2 bad command line or bad input (invalid JSON, negative delay, ...);\n"
    "  3 the store could not be opened or used; 4 no such job.\n";

typedef struct args {
    const char *pos[4]; /* positional arguments after the command */
    int npos;
    int json, all, lifo;
    const char *delay, *priority, *attempts, *backoff, *id, *limit, *offset, *age, *keep,
        *traceparent, *on_complete, *on_fail;
} args;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "lanes jobs: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see 'lanes jobs --help')\n");
    return CLI_EXIT_USAGE;
}

/* Options that take a value, and where it goes. */
static const char **value_slot(args *a, const char *opt) {
    static const struct {
        const char *name;
        size_t off;
    } opts[] = {
        {"--delay", offsetof(args, delay)},
        {"--priority", offsetof(args, priority)},
        {"--attempts", offsetof(args, attempts)},
        {"--backoff", offsetof(args, backoff)},
        {"--id", offsetof(args, id)},
        {"--limit", offsetof(args, limit)},
        {"--offset", offsetof(args, offset)},
        {"--age", offsetof(args, age)},
        {"--keep", offsetof(args, keep)},
        {"--traceparent", offsetof(args, traceparent)},
        {"--remove-on-complete", offsetof(args, on_complete)},
        {"--remove-on-fail", offsetof(args, on_fail)},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strcmp(opt, opts[i].name) == 0) return (const char **)((char *)a + opts[i].off);
    return NULL;
}

static int parse_args(int argc, char **argv, args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char **slot;
        if (strcmp(s, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(s, "--all") == 0) {
            a->all = 1;
        } else if (strcmp(s, "--lifo") == 0) {
            a->lifo = 1;
        } else if (strncmp(s, "--", 2) == 0 && (slot = value_slot(a, s))) {
            if (i + 1 >= argc) return usage_error("%s needs a value", s);
            *slot = argv[++i];
        } else if (strncmp(s, "--", 2) == 0) {
            return usage_error("unknown option '%s'", s);
        } else if (a->npos < 4) {
            a->pos[a->npos++] = s;
        } else {
            return usage_error("unexpected argument '%s'", s);
        }
    }
    return 0;
}

/* Whole-string integer in [lo, hi]. */
static int parse_ll(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    if (s == NULL || *s == '\0') return -1;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_keep(const char *s, ln_job_keep *k) {
    long long v;
    if (strcmp(s, "all") == 0) {
        k->mode = LN_KEEP_ALL;
    } else if (strcmp(s, "none") == 0) {
        k->mode = LN_KEEP_NONE;
    } else if (strncmp(s, "age:", 4) == 0 && parse_ll(s + 4, 0, 1LL << 40, &v) == 0) {
        k->mode = LN_KEEP_AGE;
        k->value = v * 1000;
    } else if (parse_ll(s, 0, 1LL << 40, &v) == 0) {
        k->mode = LN_KEEP_COUNT;
        k->value = v;
    } else {
        return -1;
    }
    return 0;
}

/* Exit code for a library error. */
static int exit_for(int err) {
    switch (err) {
    case LN_ENOENT:
        return EXIT_NOT_FOUND;
    case LN_EINVAL:
    case LN_ERANGE:
        return CLI_EXIT_USAGE;
    case LN_EBACKEND:
    case LN_ECORRUPT:
    case LN_EACCES:
    case LN_EIO:
    case LN_ENOSPC:
    case LN_ENOTSUP:
    case LN_ECONNREFUSED:
        return CLI_EXIT_UNAVAILABLE;
    default:
        return CLI_EXIT_FAILURE;
    }
}

static int fail(ln_jobs *jobs, const char *what, int err) {
    fprintf(stderr, "lanes jobs %s: %s: %s\n", what, ln_err_name(err), ln_jobs_errmsg(jobs));
    return exit_for(err);
}

/* Print v (stolen) as one line of JSON. */
static void print_json(json_t *v) {
    char *s = json_dumps(v, JSON_COMPACT);
    if (s != NULL) puts(s);
    free(s);
    json_decref(v);
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
    if (a->npos < 2 || a->npos > 3) return usage_error("%s", "add needs QUEUE NAME [JSON]");
    ln_job_opts o;
    ln_job_opts_init(&o);
    long long v;
    if (a->delay && parse_ll(a->delay, -(1LL << 62), 1LL << 62, &v) < 0)
        return usage_error("--delay '%s' is not a number of ms", a->delay);
    if (a->delay) o.delay_ms = v;
    if (a->priority && parse_ll(a->priority, -(1LL << 30), 1LL << 30, &v) < 0)
        return usage_error("--priority '%s' is not a number", a->priority);
    if (a->priority) o.priority = (int)v;
    if (a->attempts && parse_ll(a->attempts, -(1LL << 30), 1LL << 30, &v) < 0)
        return usage_error("--attempts '%s' is not a number", a->attempts);
    if (a->attempts) o.attempts = (int)v;
    if (a->backoff) {
        const char *colon = strchr(a->backoff, ':');
        size_t n = colon ? (size_t)(colon - a->backoff) : 0;
        if (colon && n == 5 && strncmp(a->backoff, "fixed", 5) == 0)
            o.backoff = LN_BACKOFF_FIXED;
        else if (colon && n == 11 && strncmp(a->backoff, "exponential", 11) == 0)
            o.backoff = LN_BACKOFF_EXPONENTIAL;
        else
            return usage_error("--backoff '%s': use fixed:MS or exponential:MS", a->backoff);
        if (parse_ll(colon + 1, -(1LL << 62), 1LL << 62, &v) < 0)
            return usage_error("--backoff '%s': MS is not a number", a->backoff);
        o.backoff_ms = v;
    }
    if (a->on_complete && parse_keep(a->on_complete, &o.remove_on_complete))
        return usage_error("--remove-on-complete '%s': all, none, N or age:S", a->on_complete);
    if (a->on_fail && parse_keep(a->on_fail, &o.remove_on_fail))
        return usage_error("--remove-on-fail '%s': all, none, N or age:S", a->on_fail);
    o.job_id = a->id;
    o.lifo = a->lifo;
    o.traceparent = a->traceparent;
    char id[LN_JOB_ID_MAX], *input = NULL;
    const char *data = a->npos == 3 ? a->pos[2] : NULL;
    if (data != NULL && strcmp(data, "-") == 0) {
        size_t len;
        if ((input = read_stdin(&len)) == NULL) {
            fprintf(stderr, "lanes jobs add: cannot read the data from stdin\n");
            return CLI_EXIT_FAILURE;
        }
        /* The data is a C string from here on: a NUL byte would silently
         * cut it short, so refuse it (JSON text never holds one; a NUL
         * inside a string is written \u0000). */
        const char *nul = memchr(input, '\0', len);
        if (nul != NULL) {
            fprintf(stderr,
                    "lanes jobs add: the data on stdin contains a NUL byte (at byte %zu); "
                    "job data must be JSON text\n",
                    (size_t)(nul - input));
            free(input);
            return CLI_EXIT_USAGE;
        }
        data = input;
    }
    int err = ln_jobs_add(jobs, a->pos[0], a->pos[1], data, &o, id, sizeof id);
    free(input);
    if (err != 0) return fail(jobs, "add", err);
    if (a->json)
        print_json(json_pack("{s:s}", "id", id));
    else
        puts(id);
    return CLI_EXIT_OK;
}

static int cmd_counts(ln_jobs *jobs, args *a) {
    if (a->npos != 1) return usage_error("%s", "counts needs QUEUE");
    ln_job_counts c;
    int err = ln_jobs_counts(jobs, a->pos[0], &c);
    if (err != 0) return fail(jobs, "counts", err);
    const char *names[] = {"waiting",   "delayed", "prioritized", "active",
                           "completed", "failed",  "paused"};
    uint64_t vals[] = {c.waiting,   c.delayed, c.prioritized, c.active,
                       c.completed, c.failed,  c.paused};
    json_t *o = a->json ? json_object() : NULL;
    for (int i = 0; i < 7; i++) {
        if (o != NULL)
            json_object_set_new(o, names[i], json_integer((json_int_t)vals[i]));
        else
            printf("%-12s %llu\n", names[i], (unsigned long long)vals[i]);
    }
    if (o != NULL) print_json(o);
    return CLI_EXIT_OK;
}

/* The fields of a job jansson writes: all but data, result and progress
 * (print_info_json writes those as stored). */
static json_t *info_fields(const ln_job_info *i) {
    json_t *o = json_pack(
        "{s:s,s:s,s:s?,s:i,s:b,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:I}", "id", i->id, "state",
        ln_job_state_name(i->state), "name", i->name, "priority",
        i->priority, "lifo", i->lifo, "attempts", i->attempts, "attempts_made", i->attempts_made,
        "attempts_started", i->attempts_started, "stalled", i->stalled, "created_ms",
        (json_int_t)i->created_ms, "run_at_ms", (json_int_t)i->run_at_ms, "started_ms",
        (json_int_t)i->started_ms, "finished_ms", (json_int_t)i->finished_ms);
    if (o == NULL) return NULL;
    json_object_set_new(o, "failed_reason",
                        i->failed_reason ? json_string(i->failed_reason) : json_null());
    json_object_set_new(o, "traceparent",
                        i->traceparent ? json_string(i->traceparent) : json_null());
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
    json_t *s = json_string(text);
    char *out = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
    fputs(out ? out : "null", stdout);
    free(out);
    json_decref(s);
}

/* A job as one compact JSON object (no newline). */
static void print_info_json(const ln_job_info *i) {
    json_t *o = info_fields(i);
    char *fields = o ? json_dumps(o, JSON_COMPACT | JSON_EMBED) : NULL;
    json_decref(o);
    printf("{%s", fields ? fields : "\"id\":null");
    free(fields);
    print_embedded("data", i->data);
    print_embedded("result", i->result);
    print_embedded("progress", i->progress);
    putchar('}');
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
}

static int cmd_get(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return usage_error("%s", "get needs QUEUE ID");
    ln_job_info info;
    int err = ln_jobs_get(jobs, a->pos[0], a->pos[1], &info);
    if (err != 0) return fail(jobs, "get", err);
    if (a->json) {
        print_info_json(&info);
        putchar('\n');
    } else
        print_info_text(&info, 1);
    ln_job_info_clear(&info);
    return CLI_EXIT_OK;
}

static int cmd_list(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return usage_error("%s", "list needs QUEUE STATE");
    int state = ln_job_state_parse(a->pos[1]);
    if (state < 0) return usage_error("unknown state '%s'", a->pos[1]);
    long long limit = 100, offset = 0;
    if (a->limit && parse_ll(a->limit, 1, 10000, &limit) < 0)
        return usage_error("--limit '%s' must be 1..10000", a->limit);
    if (a->offset && parse_ll(a->offset, 0, 1LL << 62, &offset) < 0)
        return usage_error("--offset '%s' must be >= 0", a->offset);
    ln_job_info *infos;
    size_t n;
    int err = ln_jobs_list(jobs, a->pos[0], state, (size_t)offset, (size_t)limit, &infos, &n);
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
    ln_job_info_free_array(infos, n);
    return CLI_EXIT_OK;
}

static int cmd_logs(ln_jobs *jobs, args *a) {
    if (a->npos != 2) return usage_error("%s", "logs needs QUEUE ID");
    char **lines;
    size_t n;
    int err = ln_jobs_logs(jobs, a->pos[0], a->pos[1], &lines, &n);
    if (err != 0) return fail(jobs, "logs", err);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (a->json)
            json_array_append_new(arr, json_string(lines[i]));
        else
            puts(lines[i]);
    }
    if (a->json)
        print_json(arr);
    else
        json_decref(arr);
    ln_jobs_free_lines(lines, n);
    return CLI_EXIT_OK;
}

/* retry, remove, clean, pause, resume, drain: an action and a count. */
static int cmd_action(ln_jobs *jobs, const char *cmd, args *a) {
    int err;
    size_t count = 1;
    if (strcmp(cmd, "retry") == 0) {
        if (a->npos != (a->all ? 1 : 2))
            return usage_error("%s", "retry needs QUEUE ID or QUEUE --all");
        err = a->all ? ln_jobs_retry_all(jobs, a->pos[0], &count)
                     : ln_jobs_retry(jobs, a->pos[0], a->pos[1]);
    } else if (strcmp(cmd, "remove") == 0) {
        if (a->npos != 2) return usage_error("%s", "remove needs QUEUE ID");
        err = ln_jobs_remove(jobs, a->pos[0], a->pos[1]);
    } else if (strcmp(cmd, "clean") == 0) {
        if (a->npos != 2) return usage_error("%s", "clean needs QUEUE STATE");
        int state = ln_job_state_parse(a->pos[1]);
        if (state != LN_JOB_COMPLETED && state != LN_JOB_FAILED)
            return usage_error("clean: state '%s' must be completed or failed", a->pos[1]);
        long long age = -1, keep = 0;
        if (a->age && parse_ll(a->age, 0, 1LL << 40, &age) < 0)
            return usage_error("--age '%s' must be seconds >= 0", a->age);
        if (a->keep && parse_ll(a->keep, 0, 1LL << 62, &keep) < 0)
            return usage_error("--keep '%s' must be >= 0", a->keep);
        err = ln_jobs_clean(jobs, a->pos[0], state, age < 0 ? -1 : age * 1000, (uint64_t)keep,
                            &count);
    } else if (strcmp(cmd, "drain") == 0) {
        if (a->npos != 1) return usage_error("%s", "drain needs QUEUE");
        err = ln_jobs_drain(jobs, a->pos[0], &count);
    } else { /* pause, resume */
        if (a->npos != 1) return usage_error("%s needs QUEUE", cmd);
        err = strcmp(cmd, "pause") == 0 ? ln_jobs_pause(jobs, a->pos[0])
                                        : ln_jobs_resume(jobs, a->pos[0]);
    }
    if (err != 0) return fail(jobs, cmd, err);
    if (a->json)
        print_json(json_pack("{s:b,s:I}", "ok", 1, "count", (json_int_t)count));
    else if (strcmp(cmd, "pause") != 0 && strcmp(cmd, "resume") != 0)
        printf("%zu\n", count);
    return CLI_EXIT_OK;
}

int cmd_jobs(int argc, char **argv) {
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 3) {
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *url = argv[1], *cmd = argv[2];
    static const char *const known[] = {"add",    "counts", "list",  "get",    "logs", "retry",
                                        "remove", "clean",  "pause", "resume", "drain"};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= strcmp(cmd, known[i]) == 0;
    if (!ok) return usage_error("unknown command '%s'", cmd);
    args a;
    int rc = parse_args(argc - 3, argv + 3, &a);
    if (rc != 0) return rc;
    ln_jobs *jobs;
    char msg[512];
    int err = ln_jobs_open_ex(&jobs, url, NULL, msg, sizeof msg);
    if (err != 0) {
        fprintf(stderr, "lanes jobs: cannot open '%s': %s: %s\n", url, ln_err_name(err), msg);
        return err == LN_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_UNAVAILABLE;
    }
    if (ln_jobs_warning(jobs) != NULL) /* the library never prints */
        fprintf(stderr, "lanes: warning: %s\n", ln_jobs_warning(jobs));
    if (strcmp(cmd, "add") == 0)
        rc = cmd_add(jobs, &a);
    else if (strcmp(cmd, "counts") == 0)
        rc = cmd_counts(jobs, &a);
    else if (strcmp(cmd, "list") == 0)
        rc = cmd_list(jobs, &a);
    else if (strcmp(cmd, "get") == 0)
        rc = cmd_get(jobs, &a);
    else if (strcmp(cmd, "logs") == 0)
        rc = cmd_logs(jobs, &a);
    else
        rc = cmd_action(jobs, cmd, &a);
    ln_jobs_close(jobs);
    return rc;
}

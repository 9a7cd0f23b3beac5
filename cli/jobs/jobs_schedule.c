/* jobs_schedule.c - `lanes jobs URL schedule | unschedule | schedules`:
 * job schedulers (jobs.h "Job schedulers") from the shell. Its own
 * options and --help; cmd_jobs.c hands these three commands over. */
#include "jobs_schedule.h"

#include "cli.h"
#include "cli_backoff.h"
#include "cli_err.h"
#include "cli_num.h"
#include "cli_opts.h"
#include "jobs_store.h"
#include "store_url.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char schedule_help[] =
    "usage: lanes jobs URL schedule QUEUE ID (--every MS | --cron PATTERN [--tz ZONE])\n"
    "           [--start T] [--end T] [--limit N] [--immediately]\n"
    "           [--priority N] [--attempts N] [--backoff TYPE:MS[:JITTER]]\n"
    "           NAME [JSON|-] [--json]\n"
    "\n"
    "Create or replace job scheduler ID of QUEUE (BullMQ's upsertJobScheduler):\n"
    "it adds a job NAME with data JSON (default {}; '-' reads stdin) at each\n"
    "time of its schedule, the next one when a worker takes the current one.\n"
    "Prints the id of the iteration it made (\"repeat:ID:MS\"), or nothing when\n"
    "the schedule makes none (limit used up, end passed). A sqlite: store that\n"
    "does not exist yet is created.\n"
    "\n"
    "  --every MS        an iteration every MS milliseconds (the first now)\n"
    "  --cron PATTERN    a cron pattern: 5 fields (minute hour day month weekday),\n"
    "                    or 6 with seconds first; ranges, steps, lists, names,\n"
    "                    L, #, @daily ...\n"
    "  --tz ZONE         the pattern's IANA time zone (default UTC)\n"
    "  --start T         no iteration before T\n"
    "  --end T           make none once T has passed\n"
    "                    (T: ms since the epoch, or YYYY-MM-DDTHH:MM:SSZ)\n"
    "  --limit N         at most N iterations\n"
    "  --immediately     with --cron: the first iteration runs now\n"
    "  --priority N --attempts N --backoff ...   the jobs' options, as for add\n";

static const char unschedule_help[] =
    "usage: lanes jobs URL unschedule QUEUE ID [--json]\n"
    "\n"
    "Remove job scheduler ID of QUEUE, and its next iteration if still delayed.\n"
    "No such scheduler: exit 4.\n";

static const char schedules_help[] =
    "usage: lanes jobs URL schedules QUEUE [--limit N] [--offset N] [--json]\n"
    "\n"
    "List the job schedulers of QUEUE, the next to run first, one a line:\n"
    "ID NEXT(UTC) SCHEDULE ITERATIONS NAME, where SCHEDULE is every:MS or\n"
    "cron:'PATTERN'[@ZONE]; --json prints an array of objects.\n"
    "\n"
    "  --limit N     at most N schedulers, 1..1000 (default 100)\n"
    "  --offset N    skip the first N (default 0)\n";

typedef struct sargs {
    const char *cmd, *pos[4];
    int npos, json, immediately, create;
    const char *every, *cron, *tz, *start, *end, *limit, *offset, *priority, *attempts, *backoff;
} sargs;

static char prog[64];

#define AT(member) offsetof(sargs, member)

static const cli_opt options[] = {
    CLI_OPTS_EVERY(sargs),
    {"--every", 1, AT(every), "schedule"},
    {"--cron", 1, AT(cron), "schedule"},
    {"--tz", 1, AT(tz), "schedule"},
    {"--start", 1, AT(start), "schedule"},
    {"--end", 1, AT(end), "schedule"},
    {"--limit", 1, AT(limit), "schedule schedules"},
    {"--offset", 1, AT(offset), "schedules"},
    {"--immediately", 0, AT(immediately), "schedule"},
    {"--priority", 1, AT(priority), "schedule"},
    {"--attempts", 1, AT(attempts), "schedule"},
    {"--backoff", 1, AT(backoff), "schedule"},
    CLI_OPTS_END,
};

/* T: ms since the epoch, or YYYY-MM-DDTHH:MM:SS[.mmm]Z (UTC). */
static int parse_time(const char *s, int64_t *ms) {
    long long v;
    if (cli_parse_ll(s, 0, 1LL << 50, &v) == 0) {
        *ms = v;
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    int frac = 0;
    if (rest != NULL && *rest == '.' && sscanf(rest, ".%3d", &frac) == 1)
        while (*++rest >= '0' && *rest <= '9') {
        }
    if (rest == NULL || strcmp(rest, "Z") != 0) return -1;
    *ms = (int64_t)timegm(&tm) * 1000 + frac;
    return 0;
}

/* unschedule's documented exit 4 for no such scheduler is LN_ENOENT's. */
static int fail(ln_jobs *jobs, int err) {
    return cli_jobs_fail(jobs, prog, err);
}

/* --priority, --attempts, --backoff into o. */
static int job_opts(const sargs *a, ln_job_opts *o) {
    long long v;
    ln_job_opts_init(o);
    if (a->priority && cli_parse_ll(a->priority, 0, LN_JOB_PRIORITY_MAX, &v) < 0)
        return cli_usage(prog, "--priority '%s' must be 0..%d", a->priority, LN_JOB_PRIORITY_MAX);
    if (a->priority) o->priority = (int)v;
    if (a->attempts && cli_parse_ll(a->attempts, 1, 1 << 30, &v) < 0)
        return cli_usage(prog, "--attempts '%s' must be >= 1", a->attempts);
    if (a->attempts) o->attempts = (int)v;
    static char btype[LN_BACKOFF_TYPE_MAX]; /* a custom type's name */
    if (a->backoff && cli_backoff_parse(a->backoff, o, btype, sizeof btype) < 0)
        return cli_usage(prog, "--backoff '%s' must be " CLI_BACKOFF_FORM " (%s)", a->backoff,
                         CLI_BACKOFF_HELP);
    return 0;
}

static char *read_all(FILE *f) {
    size_t len = 0, cap = 1 << 12;
    char *p = malloc(cap);
    for (size_t n; p != NULL && (n = fread(p + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (len + 1 == cap && cap < (1u << 30)) {
            char *q = realloc(p, cap *= 2);
            if (q == NULL) free(p);
            p = q;
        }
    }
    if (p == NULL) return NULL;
    p[len] = '\0';
    if (len > 0 && p[len - 1] == '\n') p[--len] = '\0';
    if (len > 0 && p[len - 1] == '\r') p[--len] = '\0';
    return p;
}

static int cmd_schedule(ln_jobs *jobs, const sargs *a) {
    if (a->npos < 3 || a->npos > 4)
        return cli_usage(prog, "%s", "schedule needs QUEUE ID NAME [JSON]");
    ln_job_schedule s;
    ln_job_schedule_init(&s);
    long long v;
    if ((a->every != NULL) == (a->cron != NULL))
        return cli_usage(prog, "%s", "schedule needs exactly one of --every MS and --cron PATTERN");
    if (a->every && cli_parse_ll(a->every, 1, 1LL << 40, &v) < 0)
        return cli_usage(prog, "--every '%s' must be milliseconds > 0", a->every);
    if (a->every) s.every_ms = v;
    if (a->tz && !a->cron) return cli_usage(prog, "%s", "--tz needs --cron");
    s.pattern = a->cron;
    s.tz = a->tz;
    if (a->start && parse_time(a->start, &s.start_ms) < 0)
        return cli_usage(prog, "--start '%s': ms since the epoch or YYYY-MM-DDTHH:MM:SSZ",
                         a->start);
    if (a->end && parse_time(a->end, &s.end_ms) < 0)
        return cli_usage(prog, "--end '%s': ms since the epoch or YYYY-MM-DDTHH:MM:SSZ", a->end);
    if (a->limit && cli_parse_ll(a->limit, 1, 1LL << 50, &v) < 0)
        return cli_usage(prog, "--limit '%s' must be >= 1", a->limit);
    if (a->limit) s.limit = v;
    s.immediately = a->immediately;
    ln_job_opts o;
    int rc = job_opts(a, &o);
    if (rc != 0) return rc;
    char *input = NULL;
    const char *data = a->npos == 4 ? a->pos[3] : NULL;
    if (data && !strcmp(data, "-") && (data = input = read_all(stdin)) == NULL)
        return cli_error(CLI_EXIT_FAILURE, prog, "LN_EIO", NULL, "cannot read stdin");
    char id[LN_JOB_ID_MAX]; /* any iteration id: scheduler ids are 1..100 bytes (jobs.h) */
    int err = ln_jobs_schedule(jobs, a->pos[0], a->pos[1], &s, a->pos[2], data, &o, id, sizeof id);
    free(input);
    if (err != 0) return fail(jobs, err);
    if (a->json)
        cli_jobs_print_json(
            json_pack("{s:s,s:s?}", "scheduler", a->pos[1], "job", id[0] ? id : NULL));
    else if (id[0])
        puts(id);
    return CLI_EXIT_OK;
}

static void iso(int64_t ms, char *out, size_t size) {
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%s.%03dZ", base, (int)(ms % 1000));
}

static json_t *sched_json(const ln_job_scheduler *s) {
    char next[48];
    iso(s->next_ms, next, sizeof next);
    json_t *j =
        json_pack("{s:o,s:o,s:I,s:s,s:I,s:I}", "id", cli_json_text(s->id), "name",
                  cli_json_text(s->name), "next_ms", (json_int_t)s->next_ms, "next", next,
                  "iterations", (json_int_t)s->iterations, "attempts", (json_int_t)s->attempts);
    json_t *data = json_loads(s->data, JSON_DECODE_ANY, NULL);
    json_object_set_new(j, "data", data ? data : cli_json_text(s->data));
    if (s->every_ms) json_object_set_new(j, "every", json_integer(s->every_ms));
    if (s->pattern) json_object_set_new(j, "pattern", json_string(s->pattern));
    if (s->tz) json_object_set_new(j, "tz", json_string(s->tz));
    if (s->start_ms) json_object_set_new(j, "start_ms", json_integer(s->start_ms));
    if (s->end_ms) json_object_set_new(j, "end_ms", json_integer(s->end_ms));
    if (s->limit) json_object_set_new(j, "limit", json_integer(s->limit));
    if (s->priority) json_object_set_new(j, "priority", json_integer(s->priority));
    return j;
}

static int cmd_schedules(ln_jobs *jobs, const sargs *a) {
    if (a->npos != 1) return cli_usage(prog, "%s", "schedules needs QUEUE");
    long long limit = 100, offset = 0;
    if (a->limit && cli_parse_ll(a->limit, 1, 1000, &limit) < 0)
        return cli_usage(prog, "--limit '%s' must be 1..1000", a->limit);
    if (a->offset && cli_parse_ll(a->offset, 0, 1LL << 40, &offset) < 0)
        return cli_usage(prog, "--offset '%s' must be >= 0", a->offset);
    ln_job_scheduler *list;
    size_t n;
    int err = ln_jobs_scheduler_list(jobs, a->pos[0], (size_t)offset, (size_t)limit, &list, &n);
    if (err != 0) return fail(jobs, err);
    json_t *arr = a->json ? json_array() : NULL;
    for (size_t i = 0; i < n; i++) {
        const ln_job_scheduler *s = &list[i];
        if (arr != NULL) {
            json_array_append_new(arr, sched_json(s));
            continue;
        }
        char next[48];
        iso(s->next_ms, next, sizeof next);
        if (s->every_ms)
            printf("%s %s every:%lld %lld %s\n", s->id, next, (long long)s->every_ms,
                   (long long)s->iterations, s->name);
        else
            printf("%s %s cron:'%s'%s%s %lld %s\n", s->id, next, s->pattern, s->tz ? "@" : "",
                   s->tz ? s->tz : "", (long long)s->iterations, s->name);
    }
    if (arr != NULL) cli_jobs_print_json(arr);
    ln_job_scheduler_free_array(list, n);
    return CLI_EXIT_OK;
}

int cli_jobs_schedule(int argc, char **argv) {
    const char *names[] = {"schedule", "unschedule", "schedules"};
    const char *helps[] = {schedule_help, unschedule_help, schedules_help};
    int which = -1, at = argc > 2 ? 2 : 1;
    for (int k = 1; k <= 2 && k < argc && which < 0; k++)
        for (int i = 0; i < 3; i++)
            if (!strcmp(argv[k], names[i])) {
                which = i;
                at = k;
            }
    if (which < 0) return -1;
    sargs a;
    memset(&a, 0, sizeof a);
    a.cmd = names[which];
    snprintf(prog, sizeof prog, "lanes jobs %s", a.cmd);
    if (cli_opts_help_asked(argc, argv)) {
        fputs(helps[which], stdout);
        return CLI_EXIT_OK;
    }
    if (at != 2) return cli_usage(prog, "usage: lanes jobs URL %s ...", a.cmd);
    cli_cmdline cl = {options, a.cmd, prog, 4};
    int rc = cli_opts_parse(&cl, argc - 3, argv + 3, &a, a.pos, &a.npos);
    if (rc != 0) return rc;
    const char *url = argv[1];
    if (which != 0 && !a.create &&
        (rc = cli_check_store_exists(prog, url, "schedule a job, or add --create, to make one")) !=
            0)
        return rc;
    ln_jobs *jobs;
    if ((rc = cli_jobs_open(prog, url, &jobs)) != 0) return rc;
    int err;
    if (which == 0) {
        rc = cmd_schedule(jobs, &a);
    } else if (which == 2) {
        rc = cmd_schedules(jobs, &a);
    } else if (a.npos != 2) {
        rc = cli_usage(prog, "%s", "unschedule needs QUEUE ID");
    } else if ((err = ln_jobs_unschedule(jobs, a.pos[0], a.pos[1])) != 0) {
        rc = fail(jobs, err);
    } else if (a.json) {
        cli_jobs_print_json(json_pack("{s:b}", "ok", 1));
    }
    ln_jobs_close(jobs);
    return rc;
}

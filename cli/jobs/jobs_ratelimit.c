/* jobs_ratelimit.c - `lanes jobs URL rate-limit QUEUE [MAX/DURATION_MS |
 * --clear | --for MS]` and `lanes jobs URL concurrency QUEUE [N |
 * --clear]`: read or set a queue's global rate limit, its manual limit
 * (BullMQ's queue.rateLimit) and its global concurrency (jobs.h "Rate
 * limits and global concurrency"). */
#include "cli.h"
#include "cli_err.h"
#include "cli_opts.h"
#include "jobs_store.h"
#include "jobs_ratelimit.h"
#include "store_url.h"

#include <lanes.h>
#include <lanes/jobs.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_jobs_rate_limit_help[] =
    "Read, set or clear the queue's global rate limit: at most MAX jobs\n"
    "taken per DURATION_MS ms by all its workers together (BullMQ's\n"
    "setGlobalRateLimit; it wins over a worker's own --rate-limit MAX).\n"
    "Without a value it prints the limit (MAX/DURATION_MS, or none) and,\n"
    "when the queue is limited now, for how many more ms.\n"
    "\n"
    "  --clear     remove the global rate limit\n"
    "  --for MS    rate limit the queue for MS ms from now, whatever its\n"
    "              window (BullMQ's queue.rateLimit; 0 ends the current\n"
    "              window). Workers with a limit take nothing meanwhile.\n";

const char cli_jobs_concurrency_help[] =
    "Read, set or clear the queue's global concurrency: at most N jobs\n"
    "active at once over all its workers (BullMQ's setGlobalConcurrency).\n"
    "Without a value it prints N, or none.\n"
    "\n"
    "  --clear     remove the global concurrency\n";

#define LIMIT_MAX 2147483647LL

int cli_jobs_limits_is(const char *name) {
    return strcmp(name, "rate-limit") == 0 || strcmp(name, "concurrency") == 0;
}

/* A decimal 0..LIMIT_MAX that is all of s, or -1. */
static long long parse_n(const char *s, size_t len) {
    if (len == 0 || len > 10) return -1;
    long long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v <= LIMIT_MAX ? v : -1;
}

int cli_parse_rate(const char *s, unsigned *max, unsigned *duration_ms) {
    const char *slash = strchr(s, '/');
    if (slash == NULL) return -1;
    long long m = parse_n(s, (size_t)(slash - s)), d = parse_n(slash + 1, strlen(slash + 1));
    if (m < 1 || d < 1) return -1;
    *max = (unsigned)m;
    *duration_ms = (unsigned)d;
    return 0;
}

/* The command line after QUEUE. */
typedef struct largs {
    const char *value; /* MAX/DURATION_MS or N, or NULL */
    const char *for_ms;
    int clear, json, create;
} largs;

static char prog[64] = "lanes jobs";

#define AT(member) offsetof(largs, member)

static const cli_opt options[] = {
    CLI_OPTS_EVERY(largs),
    {"--clear", 0, AT(clear), NULL},
    {"--for", 1, AT(for_ms), "rate-limit"},
    CLI_OPTS_END,
};

static int parse(int argc, char **argv, int rate, largs *a) {
    cli_cmdline cl = {options, argv[2], prog, 1};
    int npos = 0;
    int rc = cli_opts_parse(&cl, argc - 4, argv + 4, a, &a->value, &npos); /* at most 1 */
    if (rc != 0) return rc;
    if ((a->value != NULL) + a->clear + (a->for_ms != NULL) > 1)
        return cli_usage(prog, "%s",
                         rate ? "give one of MAX/DURATION_MS, --clear and --for"
                              : "give N or --clear, not both");
    return 0;
}

static int failed(ln_jobs *jobs, int err) {
    return cli_jobs_fail(jobs, prog, err);
}

static int show_rate(ln_jobs *jobs, const char *queue, int json) {
    int64_t max = 0, dur = 0, ttl = 0;
    int err = ln_jobs_get_rate_limit(jobs, queue, &max, &dur);
    if (err == 0) err = ln_jobs_rate_limit_ttl(jobs, queue, 0, &ttl);
    if (err != 0) return failed(jobs, err);
    if (json) {
        cli_jobs_print_json(json_pack("{s:I,s:I,s:I}", "max", (json_int_t)max, "duration_ms",
                                      (json_int_t)dur, "limited_ms", (json_int_t)ttl));
        return CLI_EXIT_OK;
    }
    if (max > 0)
        printf("%lld/%lld\n", (long long)max, (long long)dur);
    else
        puts("none");
    if (ttl > 0) printf("limited for %lld ms\n", (long long)ttl);
    return CLI_EXIT_OK;
}

static int run_rate(ln_jobs *jobs, const char *queue, const largs *a) {
    int err;
    if (a->for_ms != NULL) {
        long long ms = parse_n(a->for_ms, strlen(a->for_ms));
        if (ms < 0) return cli_usage(prog, "--for is 0..2147483647 ms, not '%s'", a->for_ms);
        err = ln_jobs_rate_limit(jobs, queue, ms);
    } else if (a->clear) {
        err = ln_jobs_set_rate_limit(jobs, queue, 0, 0);
    } else if (a->value != NULL) {
        unsigned max, dur;
        if (cli_parse_rate(a->value, &max, &dur) != 0)
            return cli_usage(prog, "the limit is MAX/DURATION_MS, both 1..2147483647, not '%s'",
                             a->value);
        err = ln_jobs_set_rate_limit(jobs, queue, max, dur);
    } else {
        return show_rate(jobs, queue, a->json);
    }
    if (err != 0) return failed(jobs, err);
    if (a->json) cli_jobs_print_json(json_pack("{s:b}", "ok", 1));
    return CLI_EXIT_OK;
}

static int run_concurrency(ln_jobs *jobs, const char *queue, const largs *a) {
    int err;
    if (a->clear || a->value != NULL) {
        long long n = a->clear ? 0 : parse_n(a->value, strlen(a->value));
        if (n < 1 && !a->clear) return cli_usage(prog, "N is 1..2147483647, not '%s'", a->value);
        if ((err = ln_jobs_set_concurrency(jobs, queue, n)) != 0) return failed(jobs, err);
        if (a->json) cli_jobs_print_json(json_pack("{s:b}", "ok", 1));
        return CLI_EXIT_OK;
    }
    int64_t n = 0;
    if ((err = ln_jobs_get_concurrency(jobs, queue, &n)) != 0) return failed(jobs, err);
    if (a->json)
        cli_jobs_print_json(json_pack("{s:I}", "concurrency", (json_int_t)n));
    else if (n > 0)
        printf("%lld\n", (long long)n);
    else
        puts("none");
    return CLI_EXIT_OK;
}

int cli_jobs_limits_main(int argc, char **argv) {
    int rate = strcmp(argv[2], "rate-limit") == 0;
    snprintf(prog, sizeof prog, "lanes jobs %s", argv[2]);
    largs a = {0};
    if (argc < 4 || strncmp(argv[3], "--", 2) == 0)
        return cli_usage(prog, "%s", "QUEUE is missing");
    int rc = parse(argc, argv, rate, &a);
    if (rc != 0) return rc;
    if (!a.create && (rc = cli_check_store_exists(prog, argv[1],
                                                  "add --create, or add a job, to make one")) != 0)
        return rc;
    ln_jobs *jobs;
    if ((rc = cli_jobs_open(prog, argv[1], &jobs)) != 0) return rc;
    rc = rate ? run_rate(jobs, argv[3], &a) : run_concurrency(jobs, argv[3], &a);
    ln_jobs_close(jobs);
    return rc;
}

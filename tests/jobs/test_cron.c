/* test_cron.c - the schedulers' computing core (src/jobs/model/cron.[ch]): cron
 * parsing and its errors, next fire times compared with BullMQ 6.7's
 * cron-parser (tests/cron/next_times.mjs: run live by the `differential`
 * case, kept as tests/cron/next_times.txt for the `golden` case), and the
 * `every` arithmetic of BullMQ's Lua, derived by hand from it. */
#include "jobs/model/cron.h"
#include "lanes.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifndef LN_SOURCE_DIR
#define LN_SOURCE_DIR "."
#endif

static int parse(const char *p, ln__cron *c, char *err) {
    return ln__cron_parse(c, p, err, 256);
}

TEST(parse_fields) {
    ln__cron c;
    char err[256];
    CHECK_EQ(parse("*/15 1-3,20 * * *", &c, err), 0);
    CHECK_EQ(c.sec, 1); /* 5 fields: second 0 */
    CHECK_EQ(c.min, (1ull << 0) | (1ull << 15) | (1ull << 30) | (1ull << 45));
    CHECK_EQ(c.hour, (1u << 1) | (1u << 2) | (1u << 3) | (1u << 20));
    CHECK_EQ(c.hour_count, 4);
    CHECK(c.dom_star && c.dow_star);
    CHECK_EQ(parse("5 1-30/2 * * JAN-mar Mon,FRI", &c, err), 0);
    CHECK_EQ(c.sec, 1ull << 5);
    CHECK_EQ(c.min & 7, 2); /* 1, 3, 5... */
    CHECK_EQ(c.month, (1u << 1) | (1u << 2) | (1u << 3));
    CHECK_EQ(c.dow, (1u << 1) | (1u << 5));
    CHECK(!c.dow_star);
    CHECK_EQ(parse("0 0 * * 7", &c, err), 0);
    CHECK_EQ(c.dow, 1); /* 7 is Sunday */
    CHECK_EQ(parse("0 0 * * 5-7", &c, err), 0);
    CHECK_EQ(c.dow, (1u << 0) | (1u << 5) | (1u << 6));
    CHECK_EQ(parse("0 0 ? * ?", &c, err), 0);
    CHECK(c.dom_star && c.dow_star);
    CHECK_EQ(parse("0 0 L * 5L", &c, err), 0);
    CHECK(c.dom_last && c.dow_has_last);
    CHECK_EQ(c.dow_last, 1u << 5);
    CHECK_EQ(parse("0 0 * * 1#2", &c, err), 0);
    CHECK_EQ(c.nth, 2);
    CHECK_EQ(c.dow, 1u << 1);
    CHECK_EQ(parse("@weekly", &c, err), 0);
    CHECK_EQ(c.dow, 1);
    CHECK_EQ(parse("  0   12 * * *  ", &c, err), 0);
    CHECK_EQ(c.hour, 1u << 12);
    CHECK_EQ(parse("3", &c, err), 0); /* the missing leading fields: "0 * * * *" */
    CHECK_EQ(c.dow, 1u << 3);
    CHECK_EQ(c.sec, 1);
    CHECK_EQ(c.hour_count, 24);
}

TEST(parse_errors) {
    static const struct {
        const char *pattern, *reason;
    } BAD[] = {
        {"", "empty"},
        {"   ", "empty"},
        {"* * * * * * *", "more than 6 fields"},
        {"60 * * * *", "minute field: value 60 out of range 0-59"},
        {"0 24 * * *", "hour field: value 24"},
        {"0 0 32 * *", "day of month field: value 32"},
        {"0 0 * 13 *", "month field: value 13"},
        {"0 0 * * 8", "day of week field: value 8"},
        {"0 0 * FOO *", "unknown name 'foo'"},
        {"0 0 * * MONDAY", "unknown name 'day'"},
        {"0 0 30 2 *", "day 30 never occurs in month 2"},
        {"0 0 * * L", "'L' needs a weekday"},
        {"0 0 * * 1#6", "occurrence after '#' must be 1-5"},
        {"0 0 * * 1#2,3", "'#' cannot be combined"},
        {"1,1 * * * *", "repeats a value"},
        {"0 0 * * 0,7", "repeats a value"},
        {"5-1 * * * *", "runs backwards"},
        {"*/0 * * * *", "must be > 0"},
        {"1/2/3 * * * *", "bad step"},
        {"1, * * * *", "empty list item"},
        {"H * * * *", "H (hashed values) is not supported"},
        {"0 0 L * * *", "invalid character 'L'"},
        {"x * * * *", "invalid character 'x'"},
        {"0 0 * * 1L2", "bad value"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        ln__cron c;
        char err[256] = "";
        int rc = parse(BAD[i].pattern, &c, err);
        if (rc != LN_EINVAL || strstr(err, BAD[i].reason) == NULL) {
            printf("'%s': rc %d, reason '%s', want '%s'\n", BAD[i].pattern, rc, err, BAD[i].reason);
            CHECK(0);
        }
    }
    char long_pattern[1100];
    memset(long_pattern, '1', sizeof long_pattern - 1);
    long_pattern[sizeof long_pattern - 1] = '\0';
    ln__cron c;
    char err[256];
    CHECK_EQ(parse(long_pattern, &c, err), LN_EINVAL);
    CHECK(strstr(err, "longer than 1024") != NULL);
}

static int64_t next_in(const char *pattern, const char *tz, int64_t after) {
    ln__cron c;
    char err[256];
    CHECK_EQ(ln__cron_parse(&c, pattern, err, sizeof err), 0);
    int64_t t = 0;
    int rc = ln__cron_next(&c, tz, after, 0, 0, &t, err, sizeof err);
    if (rc != 0) printf("%s\n", err);
    CHECK_EQ(rc, 0);
    return t;
}

/* 2026-03-29 00:00 UTC: Berlin springs forward at 01:00 UTC (02:00 local). */
#define BERLIN_SPRING 1774742400000LL

TEST(next_basic) {
    CHECK_EQ(next_in("0 * * * *", "UTC", 0), 3600000);
    CHECK_EQ(next_in("0 * * * *", NULL, 3600000), 7200000); /* strictly after */
    CHECK_EQ(next_in("* * * * * *", "UTC", 1500), 2000);
    CHECK_EQ(next_in("0 0 1 1 *", "UTC", 0), 365LL * 86400000); /* 1971 */
    /* 02:30 does not exist in Berlin that day: cron-parser (luxon) moves it
     * forward by the gap, to 03:30 local (01:30 UTC). */
    CHECK_EQ(next_in("30 2 * * *", "Europe/Berlin", BERLIN_SPRING), BERLIN_SPRING + 5400000);
    /* Midnight in Kolkata (+05:30) is 18:30 UTC. */
    CHECK_EQ(next_in("0 0 * * *", "Asia/Kolkata", 0), 18 * 3600000LL + 1800000);
}

TEST(next_window_and_zone_errors) {
    ln__cron c;
    char err[256];
    int64_t t;
    CHECK_EQ(ln__cron_parse(&c, "0 * * * *", err, sizeof err), 0);
    /* startDate moves the search forward; past endDate there is none. */
    CHECK_EQ(ln__cron_next(&c, "UTC", 0, 5 * 3600000, 0, &t, err, sizeof err), 0);
    CHECK_EQ(t, 6 * 3600000);
    CHECK_EQ(ln__cron_next(&c, "UTC", 0, 0, 3599999, &t, err, sizeof err), 0);
    CHECK(t == LN__CRON_NONE);
    CHECK_EQ(ln__cron_next(&c, "UTC", 0, 0, 3600000, &t, err, sizeof err), 0);
    CHECK_EQ(t, 3600000);
    CHECK_EQ(ln__cron_next(&c, "Mars/Olympus", 0, 0, 0, &t, err, sizeof err), LN_EINVAL);
    CHECK(strcmp(err, "unknown time zone 'Mars/Olympus'") == 0);
    CHECK_EQ(ln__cron_check_tz("America/Sao_Paulo", err, sizeof err), 0);
    CHECK_EQ(ln__cron_check_tz("Europe/Nowhere", err, sizeof err), LN_EINVAL);
    /* A time no JavaScript Date holds: refused (cron-parser has no such
     * date), never stepped into an overflow. */
    CHECK_EQ(ln__cron_next(&c, "UTC", INT64_MAX - 1000, 0, 0, &t, err, sizeof err), LN_EINVAL);
    CHECK(t == LN__CRON_NONE && strstr(err, "outside the dates") != NULL);
    CHECK_EQ(ln__cron_next(&c, "UTC", 0, 8640000000000001, 0, &t, err, sizeof err), LN_EINVAL);
    CHECK_EQ(ln__cron_next(&c, "UTC", 8639999999000000, 0, 0, &t, err, sizeof err), 0);
    /* Feb 31 in a pattern that also names April: never; cron-parser gives
     * up after 10000 steps, and so does this. */
    CHECK_EQ(ln__cron_parse(&c, "0 0 31 2,4 *", err, sizeof err), 0);
    CHECK_EQ(ln__cron_next(&c, "UTC", 0, 0, 0, &t, err, sizeof err), 0);
    CHECK(t == LN__CRON_NONE);
}

/* BullMQ's getJobSchedulerEveryNextMillis, case by case from its Lua. */
TEST(every_arithmetic) {
    static const struct {
        int64_t prev, every, now, offset, start, next, off;
    } CASES[] = {
        /* a new scheduler runs now; the offset is now's place in the grid */
        {LN__CRON_NONE, 1000, 10500, 0, 0, 10500, 500},
        /* with an offset: the next slot of the grid, moved by it */
        {LN__CRON_NONE, 1000, 10500, 200, 0, 11200, 200},
        {LN__CRON_NONE, 1000, 10500, 700, 0, 10700, 700},
        {LN__CRON_NONE, 1000, 10500, 500, 0, 11500, 500}, /* slot == now */
        /* a start date in the future is the first run, a past one is now */
        {LN__CRON_NONE, 1000, 10500, 0, 20300, 20300, 300},
        {LN__CRON_NONE, 1000, 10500, 0, 5000, 10500, 500},
        {LN__CRON_NONE, 1000, 10500, 200, 20000, 20000, 200},
        /* later iterations: prev + every ... */
        {10500, 1000, 11000, 500, 0, 11500, 500},
        {10500, 1000, 11500, 500, 0, 11500, 500},
        {10000, 1000, 10100, 0, 0, 11000, 0},
        /* ... unless that is past: realign on the grid, keeping the offset */
        {10500, 1000, 15200, 500, 0, 15500, 500},
        {10500, 1000, 15700, 500, 0, 16500, 500},
        {10500, 1000, 15500, 500, 0, 16500, 500},
        {10000, 1000, 15000, 0, 0, 16000, 0},
        {10000, 1000, 15001, 0, 0, 16000, 0},
        /* the start date only matters for the first run */
        {10500, 1000, 11000, 500, 99999, 11500, 500},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        int64_t next, off;
        ln__every_next(CASES[i].prev, CASES[i].every, CASES[i].now, CASES[i].offset, CASES[i].start,
                       &next, &off);
        if (next != CASES[i].next || off != CASES[i].off) {
            printf("case %zu: next %" PRId64 " offset %" PRId64 "\n", i, next, off);
            CHECK(0);
        }
    }
}

TEST(sched_limits) {
    ln__cron c;
    char err[256];
    CHECK_EQ(ln__cron_parse(&c, "0 * * * *", err, sizeof err), 0);
    ln__sched_opts every = {.every = 1000, .limit = 3};
    ln__sched_opts pat = {.cron = &c, .tz = "UTC", .limit = -1};
    int64_t next, off;
    /* limit 3: iterations 1..3 are made, the 4th is not */
    ln__sched_prev p = {.count = 0, .millis = LN__CRON_NONE};
    CHECK_EQ(ln__sched_next(&every, &p, 10500, &next, &off, err, sizeof err), 0);
    CHECK_EQ(next, 10500);
    CHECK_EQ(off, 500);
    p = (ln__sched_prev){.count = 2, .millis = 11500};
    every.offset = 500;
    CHECK_EQ(ln__sched_next(&every, &p, 12000, &next, &off, err, sizeof err), 0);
    CHECK_EQ(next, 12500);
    p.count = 3;
    CHECK_EQ(ln__sched_next(&every, &p, 12000, &next, &off, err, sizeof err), 0);
    CHECK(next == LN__CRON_NONE);
    every.limit = 0; /* BullMQ: limit 0 makes nothing at all */
    p = (ln__sched_prev){.count = 0, .millis = LN__CRON_NONE};
    CHECK_EQ(ln__sched_next(&every, &p, 12000, &next, &off, err, sizeof err), 0);
    CHECK(next == LN__CRON_NONE);
    /* end date: checked against now, not against the next time */
    every.limit = -1;
    every.end_ms = 12000;
    p = (ln__sched_prev){.count = 1, .millis = 11500};
    CHECK_EQ(ln__sched_next(&every, &p, 12000, &next, &off, err, sizeof err), 0);
    CHECK_EQ(next, 12500);
    CHECK_EQ(ln__sched_next(&every, &p, 12001, &next, &off, err, sizeof err), 0);
    CHECK(next == LN__CRON_NONE);
    /* a pattern counts from the later of now and the current iteration */
    p = (ln__sched_prev){.count = 1, .millis = 7200000};
    CHECK_EQ(ln__sched_next(&pat, &p, 10, &next, &off, err, sizeof err), 0);
    CHECK_EQ(next, 3 * 3600000);
    CHECK_EQ(off, 0);
    /* past the pattern's end date: finished */
    pat.end_ms = 3 * 3600000 - 1;
    CHECK_EQ(ln__sched_next(&pat, &p, 10, &next, &off, err, sizeof err), 0);
    CHECK(next == LN__CRON_NONE);
    /* immediately: the creation runs now */
    pat.end_ms = 0;
    pat.immediately = true;
    p = (ln__sched_prev){.count = 0, .millis = LN__CRON_NONE};
    CHECK_EQ(ln__sched_next(&pat, &p, 10, &next, &off, err, sizeof err), 0);
    CHECK_EQ(next, 10);
    pat.tz = "No/Where";
    pat.immediately = false;
    CHECK_EQ(ln__sched_next(&pat, &p, 10, &next, &off, err, sizeof err), LN_EINVAL);
}

/* Checks one reference line "ZONE\tSTART\tPATTERN\tRESULT" (see
 * tests/cron/next_times.mjs); returns false, saying why, on a difference. */
static bool check_line(char *line) {
    char *zone = strtok(line, "\t"), *start = strtok(NULL, "\t");
    char *pattern = strtok(NULL, "\t"), *result = strtok(NULL, "\n");
    if (zone == NULL || start == NULL || pattern == NULL || result == NULL) {
        printf("bad reference line\n");
        return false;
    }
    ln__cron c;
    char err[256];
    int rc = ln__cron_parse(&c, pattern, err, sizeof err);
    if (strcmp(result, "ERR") == 0) {
        if (rc == LN_EINVAL) return true;
        printf("%s: cron-parser refuses it, lanes accepts it\n", pattern);
        return false;
    }
    if (rc != 0) {
        printf("%s: lanes refuses it (%s), cron-parser accepts it\n", pattern, err);
        return false;
    }
    int64_t t = strtoll(start, NULL, 10);
    for (char *tok = strtok(result, " "); tok != NULL; tok = strtok(NULL, " ")) {
        int64_t want = strcmp(tok, "NONE") == 0 ? LN__CRON_NONE : strtoll(tok, NULL, 10);
        int64_t got;
        if (ln__cron_next(&c, zone, t, 0, 0, &got, err, sizeof err) != 0) {
            printf("%s in %s after %" PRId64 ": %s\n", pattern, zone, t, err);
            return false;
        }
        if (got != want) {
            printf("'%s' in %s after %" PRId64 ": lanes %" PRId64 ", cron-parser %" PRId64 "\n",
                   pattern, zone, t, got, want);
            return false;
        }
        t = got;
    }
    return true;
}

/* Compares every line of f; returns the number of lines checked. */
static long check_reference(FILE *f) {
    char line[2048];
    long n = 0, bad = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '\n') continue;
        n++;
        if (!check_line(line) && ++bad >= 20) break;
    }
    CHECK_EQ(bad, 0);
    return n;
}

/* The committed copy of the reference output (fast; no Node needed). */
TEST(golden) {
    FILE *f = fopen(LN_SOURCE_DIR "/tests/cron/next_times.txt", "r");
    CHECK(f != NULL);
    CHECK(check_reference(f) > 1000);
    fclose(f);
}

/* The reference computed now by cron-parser itself. */
TEST(differential) {
    FILE *p = popen("cd '" LN_SOURCE_DIR "/tests/cron' && node next_times.mjs", "r");
    CHECK(p != NULL);
    long n = check_reference(p);
    int status = pclose(p);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 127)) {
        LN_SKIP("node", "node or tests/interop/node_modules/cron-parser missing");
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(n > 1000);
}

/* Compares ln__every_next with every line of f (tests/cron/every_times.mjs
 * format); returns the number of lines checked. */
static long check_every(FILE *f) {
    char line[256];
    long n = 0, bad = 0;
    while (fgets(line, sizeof line, f) != NULL && bad < 20) {
        char prev_s[32];
        long long every, now, offset, start, want_next, want_off;
        if (sscanf(line, "%31s %lld %lld %lld %lld %lld %lld", prev_s, &every, &now, &offset,
                   &start, &want_next, &want_off) != 7)
            continue;
        n++;
        int64_t prev = strcmp(prev_s, "-") == 0 ? LN__CRON_NONE : strtoll(prev_s, NULL, 10);
        int64_t next, off;
        ln__every_next(prev, every, now, offset, start, &next, &off);
        if (next != want_next || off != want_off) {
            printf("every: %s -> lanes %" PRId64 " %" PRId64 "\n", line, next, off);
            bad++;
        }
    }
    CHECK_EQ(bad, 0);
    return n;
}

/* The committed copy of BullMQ's Lua answers (no Redis needed). */
TEST(every_golden) {
    FILE *f = fopen(LN_SOURCE_DIR "/tests/cron/every_times.txt", "r");
    CHECK(f != NULL);
    CHECK(check_every(f) > 1000);
    fclose(f);
}

/* BullMQ's Lua evaluated now by Redis (LANES_TEST_REDIS_URL). */
TEST(every_lua) {
    FILE *p = popen("cd '" LN_SOURCE_DIR "/tests/cron' && node every_times.mjs", "r");
    CHECK(p != NULL);
    long n = check_every(p);
    int status = pclose(p);
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 77 || WEXITSTATUS(status) == 127)) {
        LN_SKIP(getenv("LANES_TEST_REDIS_URL") == NULL ? "redis" : "node",
                "node, Redis or the node modules missing");
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(n > 1000);
}

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {TESTCASE(parse_fields),
                                         TESTCASE(parse_errors),
                                         TESTCASE(next_basic),
                                         TESTCASE(next_window_and_zone_errors),
                                         TESTCASE(every_arithmetic),
                                         TESTCASE(sched_limits),
                                         TESTCASE(golden),
                                         TESTCASE(differential),
                                         TESTCASE(every_golden),
                                         TESTCASE(every_lua),
                                         {0}};
    static const ln_test_case fast[] = {TESTCASE(parse_fields),
                                        TESTCASE(parse_errors),
                                        TESTCASE(next_basic),
                                        TESTCASE(next_window_and_zone_errors),
                                        TESTCASE(every_arithmetic),
                                        TESTCASE(sched_limits),
                                        TESTCASE(golden),
                                        TESTCASE(every_golden),
                                        {0}};
    /* differential (Node, about 30 s) and every_lua (Node and Redis) run
     * only when named, as the CTests cron/differential and cron/every_lua. */
    if (argc <= 1) return ln_test_run(argc, argv, fast);
    if ((strcmp(argv[1], "differential") == 0 || strcmp(argv[1], "every_lua") == 0) &&
        system("node --version >/dev/null 2>&1") != 0) {
        printf("skipped [node]: node is not installed\n");
        return 77;
    }
    return ln_test_run(argc, argv, cases);
}

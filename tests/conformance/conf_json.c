/* conf_json.c - JSON as JSON.parse takes it: every text RFC 8259's grammar
 * accepts (numbers of any size and exponent, \u0000, lone surrogate
 * escapes, whitespace around any value) is taken as job data, result and
 * progress and handed back byte for byte; every text JSON.parse refuses
 * (trailing commas, NaN, comments, single quotes, leading zeros, a BOM,
 * nothing) is refused as each of them. */
#include "conf.h"

#include <stdlib.h>

#define DEPTH_OK 500     /* nesting every store takes */
#define DEPTH_BAD 100000 /* nesting past the bound (docs: jobs.h) */

static const char *const accepted[] = {
    "100000000000000000000",
    "{\"x\":100000000000000000000}",
    "{\"total\":100000000000000000000,\"ok\":true}",
    "-123456789012345678901234567890123456789",
    "18446744073709551616",
    "1e400",
    "-1e400",
    "1E-400",
    "-0",
    "-0.0",
    "0.1e+1",
    "\"\\u0000\"",
    "{\"a\\u0000b\":\"\\u0000\"}",
    "\"\\ud800\"",
    "\"\\udc00\"",
    "\"\\udc00\\ud800\"",
    "{\"x\":1e20,\"s\":\"\\ud800x\"}",
    "\"\\/\"",
    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
    "\"\\u00e9\\ud83d\\ude00\"",
    "\"\x7f\"",
    "  {\"a\" : [ 1 , 2 ] }  ",
    "\n\t[1e400]\r\n",
    "true",
    "false",
    "null",
    "\"s\"",
    "0",
    "[]",
    "{}",
};

static const char *const refused[] = {
    "[1,]",
    "{\"a\":1,}",
    "NaN",
    "-Infinity",
    "[1]//c",
    "/*c*/1",
    "'a'",
    "01",
    "-01",
    "1.",
    ".5",
    "+1",
    "0x10",
    "\xef\xbb\xbf"
    "1",
    "",
    "   ",
    "\"\\x41\"",
    "\"tab\traw\"",
    "\"\\ud80\"",
    "\"\xff\"",
    "\"\xed\xa0\x80\"",
    "1 2",
    "[1e400] x",
    "{\"a\":1e400,}",
    "\"\\u0000",
    "[100000000000000000000,]",
};

/* [[[...1e400...]]] nested 'depth' deep (free it). */
static char *nested(int depth) {
    char *s = malloc((size_t)depth * 2 + 8);
    CHECK(s != NULL);
    memset(s, '[', (size_t)depth);
    memcpy(s + depth, "1e400", 5);
    memset(s + depth + 5, ']', (size_t)depth);
    s[depth * 2 + 5] = '\0';
    return s;
}

static void add_and_read_back(conf_ctx *c, const char *text) {
    char id[LN_JOB_ID_MAX];
    int rc = ln_jobs_add(c->jobs, c->queue, "t", text, NULL, id, sizeof id);
    if (rc != 0) fprintf(stderr, "add %s -> %d (%s)\n", text, rc, ln_jobs_errmsg(c->jobs));
    CHECK_EQ(rc, 0);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CONF_CHECK_STR(info.data, text);
    ln_job_info_clear(&info);
}

/* Every accepted text is stored as data and read back unchanged. */
void case_json_data_byte_for_byte(conf_ctx *c) {
    for (size_t i = 0; i < CONF_NELEM(accepted); i++) add_and_read_back(c, accepted[i]);
    char *deep = nested(DEPTH_OK);
    add_and_read_back(c, deep);
    free(deep);
}

void case_json_data_refused(conf_ctx *c) {
    char id[LN_JOB_ID_MAX];
    char *deep = nested(DEPTH_BAD);
    for (size_t i = 0; i <= CONF_NELEM(refused); i++) {
        const char *text = i < CONF_NELEM(refused) ? refused[i] : deep;
        int rc = ln_jobs_add(c->jobs, c->queue, "t", text, NULL, id, sizeof id);
        if (rc != LN_EINVAL) fprintf(stderr, "add '%.40s' -> %d\n", text, rc);
        CHECK_EQ(rc, LN_EINVAL);
        CONF_CHECK_HAS(ln_jobs_errmsg(c->jobs), "JSON");
    }
    free(deep);
    CHECK_EQ(conf_total(c, c->queue), 0);
}

/* The handler stores its job's data as progress and result; a job named
 * "refused" instead tries every refused text, which must all fail. */
static int echo_handler(ln_job *job, void *ctx) {
    atomic_int *wrong = ctx;
    if (strcmp(ln_job_name(job), "refused") == 0) {
        for (size_t i = 0; i < CONF_NELEM(refused); i++) {
            if (ln_job_progress(job, refused[i]) != LN_EINVAL ||
                ln_job_set_result(job, refused[i]) != LN_EINVAL) {
                fprintf(stderr, "taken: '%s'\n", refused[i]);
                atomic_fetch_add(wrong, 1);
            }
        }
        return ln_job_set_result(job, "\"none taken\"");
    }
    int rp = ln_job_progress(job, ln_job_data(job));
    int rr = ln_job_set_result(job, ln_job_data(job));
    if (rp != 0 || rr != 0) {
        fprintf(stderr, "progress/result '%.60s' -> %d/%d\n", ln_job_data(job), rp, rr);
        atomic_fetch_add(wrong, 1);
    }
    return 0;
}

void case_json_result_and_progress_byte_for_byte(conf_ctx *c) {
    enum { N = CONF_NELEM(accepted) + 1 };
    char ids[N][LN_JOB_ID_MAX];
    char *deep = nested(DEPTH_OK);
    for (size_t i = 0; i < N; i++) {
        const char *text = i < CONF_NELEM(accepted) ? accepted[i] : deep;
        CHECK_EQ(ln_jobs_add(c->jobs, c->queue, "t", text, NULL, ids[i], sizeof ids[i]), 0);
    }
    char rid[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "refused", "{}", NULL, rid);
    atomic_int wrong = 0;
    ln_worker_opts o;
    conf_worker_opts(&o);
    conf_run(c, c->queue, echo_handler, &wrong, &o);
    CHECK_EQ(atomic_load(&wrong), 0);
    for (size_t i = 0; i < N; i++) {
        const char *text = i < CONF_NELEM(accepted) ? accepted[i] : deep;
        ln_job_info info;
        CHECK_EQ(ln_jobs_get(c->jobs, c->queue, ids[i], &info), 0);
        CHECK_EQ(info.state, LN_JOB_COMPLETED);
        CONF_CHECK_STR(info.data, text);
        CONF_CHECK_STR(info.result, text);
        CONF_CHECK_STR(info.progress, text);
        ln_job_info_clear(&info);
    }
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, rid, &info), 0);
    CONF_CHECK_STR(info.result, "\"none taken\"");
    ln_job_info_clear(&info);
    free(deep);
}

/* ln_jobs_json_valid says what the stores take, for any length. */
void case_json_valid_agrees(conf_ctx *c) {
    (void)c;
    for (size_t i = 0; i < CONF_NELEM(accepted); i++)
        CHECK(ln_jobs_json_valid(accepted[i], strlen(accepted[i])));
    for (size_t i = 0; i < CONF_NELEM(refused); i++)
        CHECK(!ln_jobs_json_valid(refused[i], strlen(refused[i])));
    CHECK(!ln_jobs_json_valid("1\0", 2));
    CHECK(!ln_jobs_json_valid("1e400\0", 6));
    CHECK(!ln_jobs_json_valid("\"\\ud800\0\"", 9));
    CHECK(ln_jobs_json_valid("[1e400]x", 7));
    CHECK(!ln_jobs_json_valid(NULL, 0));
}

/* conf_result_size.c - results and data up to the handle's max_data_size:
 * a result the store refuses (too large, not JSON) fails the run with the
 * reason instead of completing the job with none, a later accepted result
 * wins over an earlier refusal, and 16 MiB of data and of result (the
 * default limit, LN_JOB_DATA_MAX_DEFAULT) round-trip byte for byte. */
#include "conf.h"

#include <stdlib.h>

/* By job name: "big" sets a result of 100 bytes (over the 64 of the
 * handle below) and returns 0; "fixed" sets text that is not JSON, then a
 * small result. Each checks what ln_job_set_result returned. */
static int small_limit_handler(ln_job *job, void *ctx) {
    (void)ctx;
    if (strcmp(ln_job_name(job), "big") == 0) {
        char text[103];
        text[0] = '"';
        memset(text + 1, 'x', 100);
        text[101] = '"';
        text[102] = '\0';
        CHECK_EQ(ln_job_set_result(job, text), LN_EINVAL);
        return 0;
    }
    CHECK_EQ(ln_job_set_result(job, "not json"), LN_EINVAL);
    CHECK_EQ(ln_job_set_result(job, "[1,2]"), 0);
    return 0;
}

void case_result_over_limit_fails_the_run(conf_ctx *c) {
    ln_jobs_opts jo;
    ln_jobs_opts_init(&jo);
    jo.max_data_size = 64;
    ln_jobs *small = conf_open(c, &jo);
    ln_jobs *mine = c->jobs;
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = "big";
    conf_add(c, c->queue, "big", "{}", &o, NULL);
    o.job_id = "fixed";
    conf_add(c, c->queue, "fixed", "{}", &o, NULL);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    c->jobs = small; /* conf_run's worker uses this handle's limit */
    ln_worker_stats st = conf_run(c, c->queue, small_limit_handler, NULL, &wo);
    c->jobs = mine;
    ln_jobs_close(small);
    CHECK_EQ(st.failed, 1);
    CHECK_EQ(st.completed, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "big", &info), 0);
    CHECK_EQ(info.state, LN_JOB_FAILED);
    CHECK(info.result == NULL);
    CONF_CHECK_STR(info.failed_reason,
                   "ln_job_set_result refused the result: result is larger than the limit of "
                   "64 bytes");
    CHECK_EQ(info.attempts_made, 1);
    ln_job_info_clear(&info);
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, "fixed", &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CONF_CHECK_STR(info.result, "[1,2]");
    ln_job_info_clear(&info);
}

#define BIG LN_JOB_DATA_MAX_DEFAULT /* 16 MiB: the JSON text, quotes included */

/* A JSON string of exactly BIG bytes whose characters vary (seed). */
static char *big_json(unsigned seed) {
    char *s = malloc(BIG + 1);
    CHECK(s != NULL);
    uint64_t r = seed * 2654435761u + 1;
    s[0] = '"';
    for (size_t i = 1; i < BIG - 1; i++) s[i] = (char)('a' + ln_test_rand(&r) % 26);
    s[BIG - 1] = '"';
    s[BIG] = '\0';
    return s;
}

/* Sets as result its data with the first letter made upper case. */
static int echo_handler(ln_job *job, void *ctx) {
    (void)ctx;
    const char *data = ln_job_data(job);
    CHECK_EQ(strlen(data), BIG);
    char *copy = malloc(BIG + 1);
    CHECK(copy != NULL);
    memcpy(copy, data, BIG + 1);
    copy[1] = (char)(copy[1] - 'a' + 'A');
    int rc = ln_job_set_result(job, copy);
    free(copy);
    CHECK_EQ(rc, 0);
    return 0;
}

void case_result_of_16_mib_round_trips(conf_ctx *c) {
    CHECK(LN_JOB_DATA_MAX_DEFAULT >= 16 * 1024 * 1024);
    char *data = big_json(7), id[LN_JOB_ID_MAX];
    conf_add(c, c->queue, "big", data, NULL, id);
    ln_worker_opts wo;
    conf_worker_opts(&wo);
    ln_worker_stats st = conf_run(c, c->queue, echo_handler, NULL, &wo);
    CHECK_EQ(st.completed, 1);
    ln_job_info info;
    CHECK_EQ(ln_jobs_get(c->jobs, c->queue, id, &info), 0);
    CHECK_EQ(info.state, LN_JOB_COMPLETED);
    CHECK(info.data != NULL && strcmp(info.data, data) == 0);
    data[1] = (char)(data[1] - 'a' + 'A');
    CHECK(info.result != NULL && strlen(info.result) == BIG);
    CHECK(info.result != NULL && strcmp(info.result, data) == 0);
    ln_job_info_clear(&info);
    free(data);
}

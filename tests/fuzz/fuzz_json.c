/* fuzz_json.c - the JSON acceptance rule (ln_jobs_json_valid,
 * ln__jobs_check_json: validate.c): a job's data, return value or a field
 * another program wrote. Input: the text, any bytes.
 * Checks: no crash; both functions agree (check_json up to its NUL, with a
 * terminated reason when it refuses); what jansson parses is taken. That
 * lanes takes exactly what JSON.parse takes is checked against Node by the
 * json_diff test (tests/fuzz/json_diff.mjs), over this target's corpus. */
#include "jobs/front/front.h"
#include "fuzz_common.h"
#include "lanes/jobs.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    int valid = ln_jobs_json_valid(text, size);
    FUZZ_CHECK(valid == 0 || valid == 1, "valid %d", valid);
    int has_nul = memchr(data, '\0', size) != NULL;
    FUZZ_CHECK(!(has_nul && valid), "a text with a NUL byte taken");
    json_t *v = json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    FUZZ_CHECK(v == NULL || valid || has_nul, "jansson parses what lanes refuses");
    json_decref(v);
    char *s = fuzz_cstr(data, size), err[512];
    size_t len = 0;
    int rc = ln__jobs_check_json(s, size, &len, "data", err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == LN_EINVAL, "check rc %d", rc);
    if (!has_nul) FUZZ_CHECK((rc == 0) == valid, "check_json %d, json_valid %d", rc, valid);
    if (rc == 0)
        FUZZ_CHECK(len == strlen(s), "len %zu", len);
    else
        FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0] != '\0', "no reason");
    free(s);
    return 0;
}

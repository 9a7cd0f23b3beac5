/* fuzz_sched.c - a job scheduler as another program (BullMQ, or anyone
 * with the keys) left it in Redis, read back by lanes (redis/sched.c fill:
 * the ZSET score and the repeat hash, static, so the file is included).
 * Input: "SCORE<tab>FIELD<tab>VALUE<tab>FIELD<tab>VALUE...", made into the
 * hiredis replies the store reads. Checks: no crash, no undefined
 * behaviour (UBSan: a number out of range included), the strings filled. */
#include "../../src/jobs/redis/sched.c"

#include "fuzz_common.h"

#define FIELDS_MAX 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = fuzz_cstr(data, size), *cur = buf;
    const char *score = fuzz_field(&cur);
    redisReply items[FIELDS_MAX], *ptrs[FIELDS_MAX];
    size_t n = 0;
    char *k, *v;
    while (n + 2 <= FIELDS_MAX && (k = fuzz_field(&cur)) != NULL) {
        v = fuzz_field(&cur);
        int seen = 0; /* a hash has each field once */
        for (size_t i = 0; i < n; i += 2) seen |= strcmp(items[i].str, k) == 0;
        if (seen) continue;
        char *kv[2] = {k, v != NULL ? v : ""};
        for (int j = 0; j < 2; j++, n++) {
            memset(&items[n], 0, sizeof items[n]);
            items[n].type = REDIS_REPLY_STRING;
            items[n].str = kv[j];
            items[n].len = strlen(kv[j]);
            ptrs[n] = &items[n];
        }
    }
    redisReply hash = {.type = REDIS_REPLY_ARRAY, .elements = n, .element = ptrs};
    ln_job_scheduler o;
    int rc = fill(&o, "s", 1, score != NULL ? score : "", &hash);
    FUZZ_CHECK(rc == 0, "fill rc %d", rc);
    FUZZ_CHECK(o.id != NULL && o.name != NULL && o.data != NULL, "strings");
    FUZZ_CHECK(o.attempts >= 1, "attempts %d", o.attempts);
    ln_job_scheduler_clear(&o);
    free(buf);
    return 0;
}

/* fuzz_clients.c - the reply of Redis's CLIENT LIST as the workers listing
 * reads it (ln__redis_parse_clients, redis_workers.c). Input: the reply,
 * any bytes; its first line may instead name the client base to look for
 * ("want=BASE"). Checks: no read past the reply (ASan), at most max
 * entries, every entry with an id (a line without one is skipped), a lanes worker with a pid > 0. */
#include "fuzz_common.h"
#include "internal.h"
#include "lanes/jobs.h"
#include "jobs/redis/redis_workers.h"

static void free_all(ln_worker_info *w, size_t n) {
    for (size_t i = 0; i < n; i++) {
        ln__free(w[i].id);
        ln__free(w[i].addr);
        ln__free(w[i].name);
    }
    ln__free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    char want[128] = "bull:cQ==";
    if (size > 5 && memcmp(text, "want=", 5) == 0) {
        const char *nl = memchr(text, '\n', size);
        size_t n = nl != NULL ? (size_t)(nl - text) - 5 : size - 5;
        if (n < sizeof want) {
            memcpy(want, text + 5, n);
            want[n] = '\0';
            size_t skip = nl != NULL ? (size_t)(nl - text) + 1 : size;
            text += skip;
            size -= skip;
        }
    }
    /* The reply in a buffer of exactly its size: ASan sees a read past it. */
    char *reply = malloc(size ? size : 1);
    if (reply == NULL) abort();
    memcpy(reply, text, size);
    const size_t max = 16;
    ln_worker_info *out = NULL;
    size_t n = 0, cap = 0;
    int rc = ln__redis_parse_clients(reply, size, want, 1700000000000, max, &out, &n, &cap);
    FUZZ_CHECK(rc == 0, "rc %d", rc);
    FUZZ_CHECK(n <= max && n <= cap, "n %zu, cap %zu", n, cap);
    for (size_t i = 0; i < n; i++) {
        /* (A NUL byte, which a Redis reply never holds, may end it early.) */
        FUZZ_CHECK(out[i].id != NULL, "entry %zu without id", i);
        FUZZ_CHECK(out[i].kind != LN_WORKER_LANES || out[i].pid > 0, "lanes pid %lld",
                   (long long)out[i].pid);
    }
    free_all(out, n);
    free(reply);
    return 0;
}

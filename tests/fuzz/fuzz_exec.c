/* fuzz_exec.c - the UTF-8 cleaner of `lanes worker --exec` (cli/worker/worker_exec.c
 * utf8_clean, buf_tail: static, so the file is included here), which turns
 * a job program's stdout and stderr, any bytes, into a return value and a
 * failure reason. Input: the bytes; its first byte's low bit picks the
 * failure-reason mode (control characters become '?').
 * Checks: the result is well-formed UTF-8 (jansson takes it); valid UTF-8
 * without controls comes back byte for byte; a cut stderr tail is at most
 * STDERR_TAIL bytes and, cleaned, UTF-8 too. */
#include "../../cli/worker/worker_exec.c"

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int controls = size > 0 && (data[0] & 1);
    buf out = {0};
    FUZZ_CHECK(utf8_clean(&out, (const char *)data, size, controls) == 0, "out of memory");
    json_t *s = json_stringn(out.p ? out.p : "", out.len);
    FUZZ_CHECK(s != NULL, "cleaned text is not UTF-8 (%zu bytes)", out.len);
    json_decref(s);
    json_t *whole = json_stringn((const char *)data, size);
    if (whole != NULL && !controls) {
        FUZZ_CHECK(out.len == size && memcmp(out.p ? out.p : "", data, size) == 0,
                   "valid text changed");
    }
    json_decref(whole);
    /* The stderr tail: cut, still UTF-8 once cleaned. */
    buf tail = {0};
    for (size_t n = 0; size > 0 && n <= STDERR_TAIL; n += size) /* past the tail bound */
        FUZZ_CHECK(buf_add(&tail, (const char *)data, size) == 0, "buf_add");
    buf_tail(&tail);
    FUZZ_CHECK(tail.len <= STDERR_TAIL, "tail %zu", tail.len);
    buf ce = {0};
    FUZZ_CHECK(utf8_clean(&ce, tail.p ? tail.p : "", tail.len, 1) == 0, "clean tail");
    s = json_stringn(ce.p ? ce.p : "", ce.len);
    FUZZ_CHECK(s != NULL, "cleaned tail is not UTF-8");
    json_decref(s);
    free(out.p);
    free(tail.p);
    free(ce.p);
    return 0;
}

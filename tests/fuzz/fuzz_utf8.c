/* fuzz_utf8.c - text another program wrote, made a JSON string
 * (ln__json_string_lossy, ln__utf8_seq: utf8.c). Input: any bytes.
 * Checks: never NULL (there is memory); well-formed UTF-8 comes back byte
 * for byte; otherwise each bad byte became one U+FFFD and the rest is
 * kept, so the result is exactly what a decoder that replaces each bad
 * byte reads. */
#include "fuzz_common.h"
#include "jobs/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_t *v = ln__json_string_lossy((const char *)data, size);
    FUZZ_CHECK(v != NULL, "NULL for %zu bytes", size);
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    /* Rebuild what the result must be, sequence by sequence. */
    size_t want = 0, bad = 0;
    for (size_t i = 0; i < size;) {
        size_t k = ln__utf8_seq(data + i, size - i);
        FUZZ_CHECK(k <= 4 && k <= size - i, "seq %zu at %zu", k, i);
        if (k == 0) {
            FUZZ_CHECK(want + 3 <= n && memcmp(s + want, "\xEF\xBF\xBD", 3) == 0, "at %zu", i);
            want += 3, bad++, i++;
        } else {
            FUZZ_CHECK(want + k <= n && memcmp(s + want, data + i, k) == 0, "at %zu", i);
            want += k, i += k;
        }
    }
    FUZZ_CHECK(want == n, "length %zu, want %zu", n, want);
    json_t *again = json_stringn(s, n);
    FUZZ_CHECK(again != NULL, "result not UTF-8");
    json_decref(again);
    if (bad == 0) FUZZ_CHECK(n == size, "valid text changed");
    json_decref(v);
    return 0;
}

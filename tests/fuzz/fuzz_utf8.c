/* fuzz_utf8.c - text another program wrote, made a JSON string
 * (ln__json_string_lossy, ln__utf8_seq, ln__utf8_bad, ln__utf8_cut:
 * utf8.c, which the CLI's repairs call too). Input: any bytes.
 * Checks: never NULL (there is memory); well-formed UTF-8 comes back byte
 * for byte; otherwise each bad byte became one U+FFFD and the rest is
 * kept, so the result is exactly what a decoder that replaces each bad
 * byte reads. Where no sequence starts, ln__utf8_bad is the maximal
 * subpart as jansson's own check defines it (the longest prefix some
 * continuation makes well-formed); a cut at any byte backs up at most 3
 * bytes, only over continuation bytes, and keeps valid text valid. */
#include "fuzz_common.h"
#include "jobs/model/utf8.h"

/* The maximal subpart at p when no sequence starts there: its longest
 * prefix that continuation bytes complete into text jansson takes. */
static size_t ref_bad(const uint8_t *p, size_t left) {
    size_t need = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
                  : p[0] >= 0xe0 && p[0] <= 0xef ? 3
                  : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                                 : 1;
    size_t best = 1;
    for (size_t k = 2; k < need && k <= left; k++) {
        uint8_t t[4] = {0x80, 0x80, 0x80, 0x80};
        memcpy(t, p, k);
        json_t *v = json_stringn((const char *)t, need);
        json_decref(v);
        if (v == NULL) break;
        best = k;
    }
    return best;
}

static void check_cuts(const uint8_t *data, size_t size, int valid) {
    char *s = fuzz_cstr(data, size); /* s[at] is read: at == size too */
    for (size_t at = 0; at <= size; at++) {
        size_t cut = ln__utf8_cut(s, at);
        FUZZ_CHECK(cut <= at && at - cut <= 3, "cut %zu at %zu", cut, at);
        for (size_t i = cut + 1; i <= at && i < size; i++)
            FUZZ_CHECK((data[i] & 0xc0) == 0x80, "cut %zu at %zu over %02x", cut, at, data[i]);
        if (cut > 0 && cut + 3 > at && cut < size)
            FUZZ_CHECK((data[cut] & 0xc0) != 0x80, "cut %zu at %zu in a sequence", cut, at);
        if (valid && size <= 512) { /* quadratic: short texts */
            json_t *v = json_stringn(s, cut);
            FUZZ_CHECK(v != NULL, "valid text cut at %zu (%zu) is not", at, cut);
            json_decref(v);
        }
    }
    free(s);
}

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
            size_t b = ln__utf8_bad(data + i, size - i);
            FUZZ_CHECK(b == ref_bad(data + i, size - i), "maximal subpart %zu at %zu", b, i);
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
    check_cuts(data, size, bad == 0);
    json_decref(v);
    return 0;
}

/* test_jobs_text.c - the public UTF-8 checks (include/lanes/jobs_text.h):
 * well-formed sequences and the ill-formed ones (overlong, surrogate,
 * above U+10FFFF, cut short), the maximal subparts U+FFFD replaces, cuts
 * that split no character, the lossy copy and its measuring call, and the
 * NULL and empty cases. Only the public header is used, as the `lanes`
 * command uses it. */
#include <lanes/jobs.h>

#include "testutil.h"

#include <stdint.h>
#include <string.h>

#define SEQ(lit) ln_utf8_seq(lit, sizeof(lit) - 1)
#define BAD(lit) ln_utf8_bad(lit, sizeof(lit) - 1)

TEST(seq_well_formed) {
    CHECK_EQ(SEQ("A"), 1);
    CHECK_EQ(ln_utf8_seq("", 1), 1);      /* NUL is ASCII */
    CHECK_EQ(SEQ("\xc3\xa9"), 2);         /* U+00E9 */
    CHECK_EQ(SEQ("\xe2\x82\xac"), 3);     /* U+20AC */
    CHECK_EQ(SEQ("\xef\xbf\xbd"), 3);     /* U+FFFD */
    CHECK_EQ(SEQ("\xf0\x9f\x98\x80"), 4); /* U+1F600 */
    CHECK_EQ(SEQ("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF, the last */
    CHECK_EQ(SEQ("\xc3\xa9xyz"), 2);      /* only the first sequence */
}

TEST(seq_ill_formed) {
    CHECK_EQ(SEQ("\x80"), 0);             /* a continuation byte */
    CHECK_EQ(SEQ("\xc0\x80"), 0);         /* overlong NUL */
    CHECK_EQ(SEQ("\xc1\xbf"), 0);         /* overlong */
    CHECK_EQ(SEQ("\xe0\x80\x80"), 0);     /* overlong */
    CHECK_EQ(SEQ("\xed\xa0\x80"), 0);     /* U+D800, a surrogate */
    CHECK_EQ(SEQ("\xf0\x80\x80\x80"), 0); /* overlong */
    CHECK_EQ(SEQ("\xf4\x90\x80\x80"), 0); /* above U+10FFFF */
    CHECK_EQ(SEQ("\xf5\x80\x80\x80"), 0);
    CHECK_EQ(SEQ("\xff"), 0);
    CHECK_EQ(SEQ("\xe2\x82"), 0);                /* cut short by the end */
    CHECK_EQ(ln_utf8_seq("\xe2\x82\xac", 2), 0); /* left bounds the read */
    CHECK_EQ(SEQ("\xe2\x82"
                 "A"),
             0); /* cut short by a character */
    CHECK_EQ(ln_utf8_seq(NULL, 4), 0);
    CHECK_EQ(ln_utf8_seq("A", 0), 0);
}

/* The maximal subparts, as Unicode's recommended practice counts them. */
TEST(bad_maximal_subparts) {
    CHECK_EQ(BAD("\x80"), 1);
    CHECK_EQ(BAD("\xff"), 1);
    CHECK_EQ(BAD("\xc0\x80"), 1); /* C0 starts nothing */
    CHECK_EQ(BAD("\xe2\x82"
                 "A"),
             2);
    CHECK_EQ(BAD("\xe2\x82"), 2);
    CHECK_EQ(BAD("\xf0\x9f\x98"
                 "A"),
             3);
    CHECK_EQ(BAD("\xe0\x80\x80"), 1); /* second byte out of E0's range */
    CHECK_EQ(BAD("\xed\xa0\x80"), 1); /* likewise for ED (surrogates) */
    CHECK_EQ(BAD("\xf4\x90\x80\x80"), 1);
    CHECK_EQ(BAD("A"), 0); /* well-formed: nothing to replace */
    CHECK_EQ(BAD("\xe2\x82\xac"), 0);
    CHECK_EQ(ln_utf8_bad(NULL, 1), 0);
    CHECK_EQ(ln_utf8_bad("\xff", 0), 0);
}

TEST(cut_whole_characters) {
    const char *s = "ab\xe2\x82\xac"
                    "cd"; /* a b EURO c d: 7 bytes */
    size_t n = strlen(s);
    CHECK_EQ(ln_utf8_cut(s, n, 2), 2); /* before the euro sign */
    CHECK_EQ(ln_utf8_cut(s, n, 3), 2); /* inside it: back to its start */
    CHECK_EQ(ln_utf8_cut(s, n, 4), 2);
    CHECK_EQ(ln_utf8_cut(s, n, 5), 5); /* after it */
    CHECK_EQ(ln_utf8_cut(s, n, 0), 0);
    CHECK_EQ(ln_utf8_cut(s, n, 7), 7); /* at the end */
    CHECK_EQ(ln_utf8_cut(s, n, 100), 7);
    CHECK_EQ(ln_utf8_cut(s, 3, 3), 3); /* at >= len: len, s[at] not read */
    const char *e = "\xf0\x9f\x98\x80";
    CHECK_EQ(ln_utf8_cut(e, 4, 3), 0);
    /* not UTF-8: at most 3 bytes back */
    CHECK_EQ(ln_utf8_cut("a\x80\x80\x80\x80\x80", 6, 5), 2);
    CHECK_EQ(ln_utf8_cut(NULL, 5, 2), 0);
}

TEST(lossy_copy) {
    char out[64];
    memset(out, 'x', sizeof out);
    /* UTF-8 already: measured and copied as it is */
    CHECK_EQ(ln_utf8_lossy("h\xc3\xa9", 3, NULL, 0), 3);
    CHECK_EQ(ln_utf8_lossy("h\xc3\xa9", 3, out, sizeof out), 3);
    CHECK(memcmp(out, "h\xc3\xa9", 4) == 0);
    /* each byte that starts no sequence becomes U+FFFD */
    const char bad[] = "a\xff"
                       "b\xe2\x82"
                       "c";
    const char want[] = "a\xef\xbf\xbd"
                        "b\xef\xbf\xbd\xef\xbf\xbd"
                        "c";
    size_t len = ln_utf8_lossy(bad, sizeof bad - 1, NULL, 0);
    CHECK_EQ(len, sizeof want - 1);
    CHECK_EQ(ln_utf8_lossy(bad, sizeof bad - 1, out, len + 1), len);
    CHECK(memcmp(out, want, sizeof want) == 0); /* with the NUL */
    /* a NUL inside is ASCII: kept */
    CHECK_EQ(ln_utf8_lossy("a\0b", 3, out, sizeof out), 3);
    CHECK(memcmp(out, "a\0b", 4) == 0);
    /* empty */
    CHECK_EQ(ln_utf8_lossy(NULL, 0, NULL, 0), 0);
    CHECK_EQ(ln_utf8_lossy("", 0, out, 1), 0);
    CHECK_EQ(out[0], '\0');
}

/* Too small a buffer: the length comes back and out is not touched. */
TEST(lossy_too_small) {
    char out[8];
    memset(out, 'x', sizeof out);
    CHECK_EQ(ln_utf8_lossy("\xff\xff", 2, out, 6), 6); /* needs 7 with the NUL */
    for (size_t i = 0; i < sizeof out; i++) CHECK_EQ(out[i], 'x');
    CHECK_EQ(ln_utf8_lossy("abc", 3, out, 3), 3);
    CHECK_EQ(out[0], 'x');
    CHECK_EQ(ln_utf8_lossy("abc", 3, out, 4), 3);
    CHECK(strcmp(out, "abc") == 0);
}

/* Every 1- and 2-byte input: the lossy copy is well-formed UTF-8 and
 * agrees with seq byte for byte. */
TEST(lossy_is_well_formed) {
    char in[2], out[8];
    for (unsigned a = 0; a < 256; a++) {
        for (unsigned b = 0; b < 256; b++) {
            in[0] = (char)a;
            in[1] = (char)b;
            size_t len = ln_utf8_lossy(in, 2, out, sizeof out);
            CHECK(len >= 2 && len <= 6);
            for (size_t i = 0; i < len;) {
                size_t k = ln_utf8_seq(out + i, len - i);
                CHECK(k > 0);
                if (k == 0) break;
                i += k;
            }
            if (ln_utf8_seq(in, 2) == 2) CHECK(len == 2 && memcmp(out, in, 2) == 0);
        }
    }
}

int main(int argc, char **argv) {
    static const ln_test_case cases[] = {
        TESTCASE(seq_well_formed),      TESTCASE(seq_ill_formed),
        TESTCASE(bad_maximal_subparts), TESTCASE(cut_whole_characters),
        TESTCASE(lossy_copy),           TESTCASE(lossy_too_small),
        TESTCASE(lossy_is_well_formed), {0}};
    return ln_test_run(argc, argv, cases);
}

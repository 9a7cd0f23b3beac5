/* utf8.c - UTF-8 checks for text other programs wrote (utf8.h). */
#include "utf8.h"

#include "internal.h"

#include <string.h>

/* The length of the well-formed sequence at p, or 0 with *bad the length
 * of its maximal subpart: the lead byte gives the length and the range of
 * the second byte (which rules out overlong forms, surrogates and code
 * points above U+10FFFF); every later byte is a continuation byte. */
static size_t scan(const unsigned char *p, size_t left, size_t *bad) {
    unsigned char c = p[0], lo = 0x80, hi = 0xbf; /* range of the 2nd byte */
    size_t need;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        need = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 3;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 4;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* above U+10FFFF */
    } else {
        *bad = 1;
        return 0;
    }
    size_t i = 1;
    while (i < need && i < left && p[i] >= (i == 1 ? lo : 0x80) && p[i] <= (i == 1 ? hi : 0xbf))
        i++;
    if (i == need) return need;
    *bad = i;
    return 0;
}

size_t ln__utf8_seq(const unsigned char *p, size_t left) {
    size_t bad;
    return scan(p, left, &bad);
}

size_t ln__utf8_bad(const unsigned char *p, size_t left) {
    size_t bad = 1;
    return scan(p, left, &bad) == 0 ? bad : 0;
}

size_t ln__utf8_cut(const char *s, size_t at) {
    size_t cut = at;
    while (cut > 0 && at - cut < 3 && ((unsigned char)s[cut] & 0xc0) == 0x80) cut--;
    return cut;
}

json_t *ln__json_string_lossy(const char *s, size_t n) {
    json_t *v = json_stringn(s, n);
    if (v != NULL || n == 0) return v;
    char *t = n <= ((size_t)-1 - 1) / 3 ? ln__malloc(3 * n + 1) : NULL; /* U+FFFD: 3 bytes */
    if (t == NULL) return NULL;
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        size_t len = ln__utf8_seq((const unsigned char *)s + i, n - i);
        if (len == 0) {
            memcpy(t + at, "\xEF\xBF\xBD", 3);
            at += 3;
            i++;
        } else {
            memcpy(t + at, s + i, len);
            at += len;
            i += len;
        }
    }
    v = json_stringn(t, at);
    ln__free(t);
    return v;
}

/* ---- The public calls (lanes/jobs_text.h): the checks above, for any
 * caller, with their NULL and length cases defined. */
#include <lanes/jobs_text.h>

#include <stdint.h>

size_t ln_utf8_seq(const char *p, size_t left) {
    return p != NULL && left > 0 ? ln__utf8_seq((const unsigned char *)p, left) : 0;
}

size_t ln_utf8_bad(const char *p, size_t left) {
    return p != NULL && left > 0 ? ln__utf8_bad((const unsigned char *)p, left) : 0;
}

size_t ln_utf8_cut(const char *s, size_t len, size_t at) {
    if (s == NULL) return 0;
    return at >= len ? len : ln__utf8_cut(s, at);
}

size_t ln_utf8_lossy(const char *s, size_t n, char *out, size_t size) {
    size_t len = 0;
    for (size_t i = 0; i < n;) { /* measure first: out is touched only if it fits */
        size_t k = ln__utf8_seq((const unsigned char *)s + i, n - i);
        size_t add = k == 0 ? 3 : k; /* U+FFFD is 3 bytes */
        if (len > SIZE_MAX - 1 - add) return SIZE_MAX;
        len += add;
        i += k == 0 ? 1 : k;
    }
    if (out == NULL || size <= len) return len;
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        size_t k = ln__utf8_seq((const unsigned char *)s + i, n - i);
        memcpy(out + at, k == 0 ? "\xef\xbf\xbd" : s + i, k == 0 ? 3 : k);
        at += k == 0 ? 3 : k;
        i += k == 0 ? 1 : k;
    }
    out[at] = '\0';
    return len;
}

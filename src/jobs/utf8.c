/* utf8.c - UTF-8 checks for text other programs wrote (utf8.h). */
#include "utf8.h"

#include "internal.h"

#include <string.h>

size_t ln__utf8_seq(const unsigned char *p, size_t left) {
    if (p[0] < 0x80) return 1;
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || len > left) return 0;
    for (size_t k = 1; k < len; k++)
        if ((p[k] & 0xC0) != 0x80) return 0;
    if (len == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
    if (len == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))) return 0;
    return len;
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

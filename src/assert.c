/* assert.c - the failure path of LN_ASSERT (internal.h), debug builds. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One diagnostic line on stderr, then abort. write(2) rather than stdio:
 * no locks, no buffers, safe wherever an invariant breaks. */
void ln__assert_fail(const char *expr, const char *file, int line) {
    char num[16];
    int n = 0;
    char digits[16];
    unsigned v = line > 0 ? (unsigned)line : 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && n < (int)sizeof digits);
    for (int i = 0; i < n; i++) num[i] = digits[n - 1 - i];
    const char *parts[] = {"lanes: ", file, ":", NULL, ": assertion failed: ", expr, "\n"};
    for (size_t i = 0; i < LN_ARRAY_SIZE(parts); i++) {
        const char *s = parts[i] != NULL ? parts[i] : num;
        size_t len = parts[i] != NULL ? strlen(s) : (size_t)n;
        ssize_t rc = write(STDERR_FILENO, s, len);
        (void)rc;
    }
    abort();
}

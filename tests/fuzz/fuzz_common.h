/* fuzz_common.h - what the fuzz targets of tests/fuzz share: the input as
 * a NUL-terminated copy, tab-separated fields, and a check that aborts
 * (so libFuzzer keeps the input) with the reason. */
#ifndef LN_FUZZ_COMMON_H
#define LN_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* data[0..n) as a new NUL-terminated string (a NUL inside ends it early, as
 * it would for any C caller). */
static inline char *fuzz_cstr(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (s == NULL) abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

/* The next tab-separated field of *cursor (NUL-terminated in place), or
 * NULL when there is none left. */
static inline char *fuzz_field(char **cursor) {
    char *s = *cursor;
    if (s == NULL) return NULL;
    char *tab = strchr(s, '\t');
    if (tab != NULL) {
        *tab = '\0';
        *cursor = tab + 1;
    } else {
        *cursor = NULL;
    }
    return s;
}

/* An err buffer must come back NUL-terminated within its size. */
static inline int fuzz_terminated(const char *err, size_t size) {
    return memchr(err, '\0', size) != NULL;
}

#endif

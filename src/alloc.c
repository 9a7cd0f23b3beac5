/* alloc.c - the replaceable allocator (libuv uv_replace_allocator). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Set once before any object exists (documented in lanes.h), read without
 * synchronisation afterwards: no atomics needed on the hot path. */
static ln_malloc_fn a_malloc = malloc;
static ln_realloc_fn a_realloc = realloc;
static ln_calloc_fn a_calloc = calloc;
static ln_free_fn a_free = free;

int ln_set_allocator(ln_malloc_fn m, ln_realloc_fn r, ln_calloc_fn c, ln_free_fn f) {
    if (m == NULL || r == NULL || c == NULL || f == NULL) return LN_EINVAL;
    a_malloc = m;
    a_realloc = r;
    a_calloc = c;
    a_free = f;
    return 0;
}

void ln_reset_allocator(void) {
    a_malloc = malloc;
    a_realloc = realloc;
    a_calloc = calloc;
    a_free = free;
}

void *ln__malloc(size_t size) {
    return a_malloc(size ? size : 1);
}
void *ln__calloc(size_t count, size_t size) {
    return a_calloc(count ? count : 1, size ? size : 1);
}
void *ln__realloc(void *ptr, size_t size) {
    return a_realloc(ptr, size ? size : 1);
}
void ln__free(void *ptr) {
    if (ptr != NULL) a_free(ptr);
}

char *ln__strdup(const char *s) {
    if (s == NULL) return NULL;
    size_t n = strlen(s) + 1;
    char *d = ln__malloc(n);
    if (d != NULL) memcpy(d, s, n);
    return d;
}

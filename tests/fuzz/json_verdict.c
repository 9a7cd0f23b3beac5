/* json_verdict.c - for json_diff.mjs: prints "1" or "0" per file named on
 * the command line, whether ln_jobs_json_valid takes its bytes. */
#include "lanes/jobs.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 2;
        }
        size_t cap = 1 << 16, n = 0, got;
        char *buf = malloc(cap);
        while (buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0) {
            n += got;
            if (n == cap) buf = realloc(buf, cap *= 2);
        }
        fclose(f);
        if (buf == NULL) return 2;
        printf("%d\n", ln_jobs_json_valid(buf, n));
        free(buf);
    }
    return 0;
}

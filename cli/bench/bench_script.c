/* bench_script.c - read back and hash the code an experiment ran. */
#include "bench_script.h"

#include <openssl/evp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CLI_SOURCE_DIR
#define CLI_SOURCE_DIR "."
#endif

const char *cli_source_dir(void) {
    const char *dir = getenv("LANES_SOURCE_DIR");
    return dir && *dir ? dir : CLI_SOURCE_DIR;
}

void cli_sha256_hex(const void *data, size_t len, char hex[65]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    hex[0] = '\0';
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1) return;
    for (unsigned i = 0; i < mdlen && i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

/* Append the whole file at path to *buf (length *len); 0 or -1. */
static int append_file(char **buf, size_t *len, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int rc = 0;
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        char *grown = realloc(*buf, *len + got + 1);
        if (!grown) {
            rc = -1;
            break;
        }
        memcpy(grown + *len, chunk, got);
        *len += got;
        grown[*len] = '\0';
        *buf = grown;
    }
    if (ferror(f)) rc = -1;
    fclose(f);
    return rc;
}

static int append_text(char **buf, size_t *len, const char *text) {
    size_t n = strlen(text);
    char *grown = realloc(*buf, *len + n + 1);
    if (!grown) return -1;
    memcpy(grown + *len, text, n + 1);
    *len += n;
    *buf = grown;
    return 0;
}

int cli_script_load(cli_script *s, const char *dir, const char *const *files, size_t max) {
    memset(s, 0, sizeof *s);
    size_t count = 0;
    while (count < max && files[count]) count++;
    char *buf = calloc(1, 1);
    size_t len = 0;
    int rc = buf ? 0 : -1;
    for (size_t i = 0; buf && i < count; i++) {
        char path[4096], header[512];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        snprintf(header, sizeof header, "%s// ==== %s ====\n",
                 len > 0 && buf[len - 1] != '\n' ? "\n" : "", files[i]);
        if (count > 1 && append_text(&buf, &len, header) != 0) {
            rc = -1;
            break;
        }
        if (append_file(&buf, &len, path) != 0) {
            if (!s->missing[0]) snprintf(s->missing, sizeof s->missing, "%s", path);
            rc = -1;
        }
    }
    s->text = buf;
    if (buf) cli_sha256_hex(buf, len, s->sha256);
    return rc;
}

void cli_script_free(cli_script *s) {
    if (!s) return;
    free(s->text);
    s->text = NULL;
}

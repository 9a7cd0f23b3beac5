/* store_url.c - refuse a sqlite: store that does not exist (store_url.h). */
#include "store_url.h"

#include "cli.h"
#include "cli_err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* The file of a sqlite: URL ("sqlite:PATH" or "sqlite://PATH", then
 * "?..."), in buf; NULL for another kind of store or a path that does not
 * fit. */
static const char *sqlite_path(const char *url, char *buf, size_t size) {
    if (strncmp(url, "sqlite:", 7) != 0) return NULL;
    const char *p = url + 7;
    if (strncmp(p, "//", 2) == 0) p += 2; /* sqlite:///abs/path */
    size_t n = strcspn(p, "?");
    if (n == 0 || n >= size) return NULL;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

int cli_check_store_exists(const char *prog, const char *url, const char *how) {
    char path[4096];
    struct stat st;
    if (sqlite_path(url, path, sizeof path) == NULL) return 0;
    if (stat(path, &st) == 0 || errno != ENOENT) return 0; /* the library says the rest */
    char *slash = strrchr(path, '/');
    if (slash != NULL) {
        *slash = '\0';
        if (stat(slash == path ? "/" : path, &st) != 0)
            return cli_error(CLI_EXIT_UNAVAILABLE, prog, "LN_ENOENT", NULL,
                             "no store at %s/%s: directory '%s' does not exist", path, slash + 1,
                             slash == path ? "/" : path);
        *slash = '/';
    }
    return cli_error(CLI_EXIT_USAGE, prog, "LN_ENOENT", NULL, "no store at %s (%s)", path, how);
}

void cli_store_url_shown(char *out, size_t size, const char *url) {
    snprintf(out, size, "%s", url);
    char *scheme = strstr(out, "://");
    if (scheme == NULL) return;
    char *host = scheme + 3, *at = strchr(host, '@'), *slash = strchr(host, '/');
    if (at == NULL || (slash != NULL && slash < at)) return;
    char *colon = memchr(host, ':', (size_t)(at - host));
    char *from = colon != NULL ? colon + 1 : host; /* USER:PASSWORD or PASSWORD */
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", at);
    snprintf(from, size - (size_t)(from - out), "***%s", rest);
}

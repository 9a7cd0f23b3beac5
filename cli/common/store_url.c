/* store_url.c - store URLs: refuse a sqlite: store that does not exist, hide a
 * password, take one from a file (store_url.h). */
#include "store_url.h"

#include "cli.h"
#include "cli_err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
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

/* The value of parameter key=... in the query q ("a=1&b=2"): its start and
 * length, and the span of "key=value" with one '&' next to it (to cut it
 * out). 0 if there is none. */
static int find_param(const char *q, const char *key, const char **val, size_t *vlen,
                      const char **cut, size_t *cutlen) {
    size_t klen = strlen(key);
    for (const char *p = q; *p != '\0';) {
        size_t n = strcspn(p, "&");
        if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            *val = p + klen + 1;
            *vlen = n - klen - 1;
            *cut = p;
            *cutlen = n + (p[n] == '&');
            if (p[n] != '&' && p > q) { /* the last one: take the '&' before it */
                (*cut)--;
                (*cutlen)++;
            }
            return 1;
        }
        p += n + (p[n] == '&');
    }
    return 0;
}

/* The first line of path, without its line end, percent-encoded into out
 * (all but unreserved characters). 0, or -1 with why. */
static int read_secret(const char *path, char *out, size_t size, char *why, size_t whysize) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(why, whysize, "password file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    size_t n = got ? strcspn(line, "\r\n") : 0;
    if (n == 0) {
        snprintf(why, whysize, "password file %s: the first line must hold the password", path);
        return -1;
    }
    size_t o = 0;
    for (size_t i = 0; i < n && o + 4 < size; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("-._~", c) != NULL)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, size - o, "%%%02X", c);
    }
    out[o] = '\0';
    memset(line, 0, sizeof line);
    return 0;
}

/* url with the password of the file path put in its authority and the
 * password_file parameter (cut, cutlen; NULL: none) taken out. */
static char *with_password(const char *url, const char *path, const char *cut, size_t cutlen,
                           char *why, size_t whysize) {
    if (strncmp(url, "redis://", 8) != 0) {
        snprintf(why, whysize, "a password file applies to a redis:// URL");
        return NULL;
    }
    const char *host = url + 8;
    size_t auth = strcspn(host, "/?");
    const char *at = memchr(host, '@', auth);
    if (at != NULL && memchr(host, ':', (size_t)(at - host)) != NULL) {
        snprintf(why, whysize, "the URL has a password already: drop it or the password file");
        return NULL;
    }
    char secret[3 * 1024 + 1];
    if (read_secret(path, secret, sizeof secret, why, whysize) != 0) return NULL;
    size_t user = at != NULL ? (size_t)(at - host) : 0;
    const char *rest = at != NULL ? at + 1 : host;
    size_t size = strlen(url) + strlen(secret) + 8;
    char *out = malloc(size);
    if (out != NULL) {
        size_t before = cut != NULL ? (size_t)(cut - rest) : strlen(rest);
        int n =
            snprintf(out, size, "redis://%.*s:%s@%.*s", (int)user, host, secret, (int)before, rest);
        if (cut != NULL) snprintf(out + n, size - (size_t)n, "%s", cut + cutlen);
        size_t len = strlen(out); /* a query left empty loses its '?' */
        if (len > 0 && out[len - 1] == '?') out[len - 1] = '\0';
    } else {
        snprintf(why, whysize, "out of memory");
    }
    memset(secret, 0, sizeof secret);
    return out;
}

char *cli_store_url_resolve(const char *url, char *why, size_t whysize) {
    const char *q = strchr(url, '?'), *val = NULL, *cut = NULL;
    size_t vlen = 0, cutlen = 0;
    if (q != NULL && find_param(q + 1, "password_file", &val, &vlen, &cut, &cutlen)) {
        char path[4096];
        if (vlen == 0 || vlen >= sizeof path) {
            snprintf(why, whysize, "password_file= needs a path");
            return NULL;
        }
        memcpy(path, val, vlen);
        path[vlen] = '\0';
        return with_password(url, path, cut, cutlen, why, whysize);
    }
    const char *env = getenv("LANES_REDIS_PASSWORD_FILE");
    if (env != NULL && *env != '\0' && strncmp(url, "redis://", 8) == 0) {
        size_t auth = strcspn(url + 8, "/?");
        const char *at = memchr(url + 8, '@', auth);
        if (at == NULL || memchr(url + 8, ':', (size_t)(at - url - 8)) == NULL)
            return with_password(url, env, NULL, 0, why, whysize);
    }
    char *copy = strdup(url);
    if (copy == NULL) snprintf(why, whysize, "out of memory");
    return copy;
}

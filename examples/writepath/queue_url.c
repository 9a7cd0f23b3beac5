/* queue_url.c - the job store the service and the worker agree on when
 * neither is given --queue: a SQLite file beside the data database. */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *wp_default_queue_url(const char *db_path) {
    size_t n = strlen("sqlite:") + strlen(db_path) + strlen(WP_QUEUE_SUFFIX) + 1;
    char *url = malloc(n);
    if (url) snprintf(url, n, "sqlite:%s%s", db_path, WP_QUEUE_SUFFIX);
    return url;
}

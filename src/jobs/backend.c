/* backend.c - the one helper of the store interface (backend.h): a
 * store's error detail. */
#include "backend.h"

#include <stdarg.h>
#include <stdio.h>

int ln__jobs_be_err(ln__jobs_be *be, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(be->errmsg, sizeof be->errmsg, fmt, ap);
    va_end(ap);
    return code;
}

/* dash_reply.h - what the parts of `lanes dash` that answer requests
 * share (dash_reply.c): error replies, a failed library call as a reply,
 * a text's preview, the clock. It calls no other part of the dashboard,
 * so the endpoints (dash_api.c, dash_edit.c, dash_flow.c,
 * dash_throughput.c, dash_http.c) and the connection guard (dash_conn.c)
 * all sit above it (dash.h has the call direction). */
#ifndef CLI_DASH_REPLY_H
#define CLI_DASH_REPLY_H

#include "dash.h"

#include <jansson.h>
#include <stdint.h>

/* An error reply {"error": {"code": code, "message": msg}}. */
cli_dash_reply cli_dash_error(unsigned status, const char *code, const char *msg);

/* A reply for a failed library call (ln_jobs_errmsg as the message):
 * LN_ENOENT 404, LN_EINVAL / LN_EBUSY / LN_ETOOBIG 409, LN_ENOSPC 507,
 * others 503. */
cli_dash_reply cli_dash_lib_error(cli_dash *d, int err);

/* s cut to 200 bytes (whole UTF-8 characters) as a JSON string; null for
 * NULL. */
json_t *cli_dash_preview(const char *s);

/* Milliseconds of the monotonic clock. */
int64_t cli_dash_now_ms(void);

#endif

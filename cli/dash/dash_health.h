/* dash_health.h - whether the store of `lanes dash` answers: GET /healthz
 * and the lines on stderr when it stops answering and when it is back
 * (docs/dash.md, docs/deploy.md). */
#ifndef CLI_DASH_HEALTH_H
#define CLI_DASH_HEALTH_H

#include "dash.h"

#include <jansson.h>

/* How often the watch thread asks the store. */
#define CLI_DASH_HEALTH_EVERY_MS 2000

/* Ask the store now: 200 and {"status":"up",...}, or 503 and
 * {"status":"down","error":...}; the first failure after an answer and the
 * first answer after failures are each said in a line on stderr. *body is
 * new. Any thread. */
unsigned cli_dash_health(cli_dash *d, json_t **body);

/* Ask the store every CLI_DASH_HEALTH_EVERY_MS from a thread of its own
 * (so an outage is said with no request coming), until
 * cli_dash_health_stop. 0, or -1 (no thread: /healthz still answers). */
int cli_dash_health_start(cli_dash *d);
void cli_dash_health_stop(void);

#endif

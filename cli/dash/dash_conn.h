/* dash_conn.h - the connection guard of `lanes dash` (dash_conn.c): a
 * deadline for each whole request, room made by closing idle keep-alive
 * connections, and the mark of a connection that came when the server was
 * full (docs/dash.md, "Access and limits"). */
#ifndef CLI_DASH_CONN_H
#define CLI_DASH_CONN_H

#include <microhttpd.h>

typedef struct cli_dash_guard cli_dash_guard;

/* A guard for at most slots connections (libmicrohttpd's limit), of which
 * max are served and the rest answered 503; each must send a whole
 * request within deadline_s seconds of its opening or of its previous
 * answer. Starts the guard's timer thread. NULL if out of memory or no
 * thread. */
cli_dash_guard *cli_dash_guard_new(unsigned max, unsigned slots, unsigned deadline_s);
/* Stops the timer thread and frees g (after the daemon stopped). */
void cli_dash_guard_free(cli_dash_guard *g);

/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the guard). */
void cli_dash_guard_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                           enum MHD_ConnectionNotificationCode code);

/* 1 if conn came while the server was full (answer 503 and close). */
int cli_dash_guard_over(struct MHD_Connection *conn);
/* conn's request is in and being answered: no deadline until done. */
void cli_dash_guard_answering(cli_dash_guard *g, struct MHD_Connection *conn);
/* conn's request is answered: the wait for its next one starts now. */
void cli_dash_guard_done(cli_dash_guard *g, struct MHD_Connection *conn);

#endif

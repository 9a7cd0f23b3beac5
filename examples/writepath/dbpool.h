/* dbpool.h - a fixed-size pool of database connections (mysql2's pool in the
 * original Node.js service, connectionLimit 10): at most 'size' threads hold
 * a connection at once; the others wait in FIFO order.
 *
 * Thread rules: every function except open/close may be called from any
 * thread. A connection acquired by a thread is used only by that thread
 * until it releases it.
 */
#ifndef WP_DBPOOL_H
#define WP_DBPOOL_H

#include "db.h"

typedef struct wp_dbpool wp_dbpool;

/* Open size connections to path (see wp_conn_open). 0, or -1 (printed). */
int wp_dbpool_open(wp_dbpool **out, const char *path, unsigned size);
/* Close every connection. No connection may be out. NULL is a no-op. */
void wp_dbpool_close(wp_dbpool *p);

/* Take a connection, waiting (FIFO) while all are in use. Never NULL. */
wp_conn *wp_dbpool_acquire(wp_dbpool *p);
/* Give back a connection taken with wp_dbpool_acquire, settled first
 * (wp_conn_settle: no statement left stepping, no transaction open). */
void wp_dbpool_release(wp_dbpool *p, wp_conn *c);

#endif

/* service.h - the subcommands of the `writepath` program (one file each).
 * Each gets argv starting at its own name and returns the exit code:
 * 0 success, 1 the operation failed, 2 bad command line. */
#ifndef WP_SERVICE_H
#define WP_SERVICE_H

/* The job queue both processes use. */
#define WP_QUEUE "writepath"
/* Default store of the jobs when --queue is not given: "sqlite:" + DB + this. */
#define WP_QUEUE_SUFFIX ".queue"

/* serve.c: the HTTP service. */
int wp_serve_main(int argc, char **argv);
/* check.c: drain the queue, then check counts and notifications. */
int wp_check_main(int argc, char **argv);
/* waterfall.c: one trace as an SVG waterfall. */
int wp_waterfall_main(int argc, char **argv);
/* boundary.c: response-boundary times of the traces in a file. */
int wp_boundary_main(int argc, char **argv);

/* The queue URL for a data database when none was given (malloc'd). */
char *wp_default_queue_url(const char *db_path);

#endif

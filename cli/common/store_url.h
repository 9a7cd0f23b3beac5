/* store_url.h - a store URL as the commands check and show it: the check
 * `lanes jobs` and `lanes worker` make before they open a store (a
 * sqlite: PATH that does not exist is refused rather than silently
 * becoming a new, empty store), and the URL with its password hidden. */
#ifndef CLI_STORE_URL_H
#define CLI_STORE_URL_H

#include <stddef.h>

/* 0 to go on (not a sqlite: URL, the file exists, or something the
 * library will report itself), else the exit code after a message from
 * prog (cli_err.h): CLI_EXIT_USAGE when the file is missing (how says
 * what makes one, e.g. "add --create, or add a job, to make one"),
 * CLI_EXIT_UNAVAILABLE when its directory is missing too. */
int cli_check_store_exists(const char *prog, const char *url, const char *how);

/* url into out (size bytes) as it may be shown (a start line, the
 * dashboard): the password of "scheme://[USER:]PASSWORD@host..." becomes
 * "***". */
void cli_store_url_shown(char *out, size_t size, const char *url);

/* The URL to open for url, which names no secret (docs/deploy.md): a
 * redis:// URL with ?password_file=PATH, or without a password while
 * LANES_REDIS_PASSWORD_FILE=PATH is set, gets the first line of PATH as
 * its password (and loses the parameter). A new string (free it), or NULL
 * with the reason in why (the file cannot be read, the URL has a password
 * already, not a redis:// URL). */
char *cli_store_url_resolve(const char *url, char *why, size_t whysize);

/* The environment variable that names the store when the command line
 * names none. */
#define CLI_STORE_ENV "LANES_STORE"

#endif

/* cli_err.h - how the `lanes` command reports an error: a line of text on
 * stderr, or under --json one JSON object on stderr,
 * {"error":{"code":"LN_EINVAL","message":"..."}}, so that stdout only ever
 * holds results (docs/cli.md). */
#ifndef CLI_ERR_H
#define CLI_ERR_H

#include <jansson.h>

/* s as a new JSON string (NULL: JSON null). Text that is not UTF-8 (a
 * path, an argument, a program's stderr, a job id or name a BullMQ script
 * cut inside a character) keeps every valid character and has each byte
 * that is not part of one replaced by U+FFFD, as a UTF-8 decoder does,
 * rather than losing the whole text. NULL only when out of memory. */
json_t *cli_json_text(const char *s);

/* Whether errors are JSON from now on (the command saw --json). */
void cli_err_json(int on);
int cli_err_is_json(void);

/* Report an error of the program prog ("lanes jobs add"): code is an error
 * name such as "LN_EINVAL" (ln_err_name), the message is printf-formatted.
 * In text mode a hint, if not NULL, follows on its own line. Returns
 * exit_code, for `return cli_error(...)`. */
int cli_error(int exit_code, const char *prog, const char *code, const char *hint, const char *fmt,
              ...) __attribute__((format(printf, 5, 6)));

/* A warning (text "prog: warning: msg", or {"warning":"msg"}) on stderr. */
void cli_warning(const char *prog, const char *msg);

#endif

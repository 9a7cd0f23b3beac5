/* store_check.h - the check `lanes jobs` and `lanes worker` make before
 * they open a store: a sqlite: PATH that does not exist is refused rather
 * than silently becoming a new, empty store. */
#ifndef CLI_STORE_CHECK_H
#define CLI_STORE_CHECK_H

/* 0 to go on (not a sqlite: URL, the file exists, or something the
 * library will report itself), else the exit code after a message from
 * prog (cli_err.h): CLI_EXIT_USAGE when the file is missing (how says
 * what makes one, e.g. "add --create, or add a job, to make one"),
 * CLI_EXIT_UNAVAILABLE when its directory is missing too. */
int cli_check_store_exists(const char *prog, const char *url, const char *how);

#endif

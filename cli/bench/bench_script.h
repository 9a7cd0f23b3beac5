/* bench_script.h - the exact code an experiment ran: source files read
 * back and hashed (SHA-256), for the "script" and "scriptSha256" fields. */
#ifndef CLI_BENCH_SCRIPT_H
#define CLI_BENCH_SCRIPT_H

#include <stddef.h>

typedef struct cli_script {
    char *text;         /* owned; "" when no file could be read */
    char sha256[65];    /* lowercase hex of text */
    char missing[4096]; /* the first file that could not be read, or "" */
} cli_script;

/* The source tree the experiments were built from: $LANES_SOURCE_DIR, else
 * the CLI_SOURCE_DIR of the build. Static storage or the environment. */
const char *cli_source_dir(void);

/* Read files[0..] (up to the first NULL or max entries), relative to dir,
 * into s. One file: its bytes exactly, so the hash matches `sha256sum`.
 * Several: each preceded by a line "// ==== <name> ====". Returns 0, or -1
 * if a file is missing (s->missing says which; the rest is still read) or
 * memory ran out. s is valid for cli_script_free either way. */
int cli_script_load(cli_script *s, const char *dir, const char *const *files, size_t max);
void cli_script_free(cli_script *s);

/* Lowercase hex SHA-256 of data into hex[65]. */
void cli_sha256_hex(const void *data, size_t len, char hex[65]);

#endif

/* completion.h - `lanes completion bash|zsh` (completion.c). */
#ifndef CLI_COMPLETION_H
#define CLI_COMPLETION_H

#include <stddef.h>

/* argv starts at "completion"; names are the n commands of `lanes`. */
int cli_completion(int argc, char **argv, const char *const *names, size_t n);

#endif

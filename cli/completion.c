/* completion.c - `lanes completion bash|zsh`: print a shell completion
 * script. The command names come from the tables of main.c and
 * jobs_help.c; the options are not copied into the script: it reads them
 * from `lanes ... --help` when asked, so they are always those the
 * installed command's help names. */
#include "completion.h"
#include "cli.h"
#include "jobs_help.h"

#include <lanes.h>

#include <stdio.h>
#include <string.h>

static void print_words(const char *const *names, size_t n) {
    for (size_t i = 0; i < n; i++) printf("%s%s", i ? " " : "", names[i]);
}

static void print_jobs_words(void) {
    const char *name;
    for (size_t i = 0; (name = cli_jobs_cmd_name(i, NULL)) != NULL; i++)
        printf("%s%s", i ? " " : "", name);
}

static void bash_script(const char *const *names, size_t n) {
    printf("# bash completion for lanes %s (`lanes completion bash`).\n"
           "# The options each command takes are read from its --help.\n",
           ln_version_string());
    puts("_lanes_opts() {\n"
         "    command \"$_lanes_prog\" \"$@\" --help 2>/dev/null |\n"
         "        grep -o -- '--[a-z][a-z0-9-]*' | sort -u\n"
         "}\n"
         "_lanes() {\n"
         "    local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}\n"
         "    local _lanes_prog=${COMP_WORDS[0]}");
    printf("    local commands='");
    print_words(names, n);
    printf("'\n    local jobs_commands='");
    print_jobs_words();
    puts(
        "'\n"
        "    COMPREPLY=()\n"
        "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
        "        COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
        "        return 0\n"
        "    fi\n"
        "    case $cmd in\n"
        "    help)\n"
        "        [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
        "        return 0 ;;\n"
        "    completion)\n"
        "        [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\"))\n"
        "        return 0 ;;\n"
        "    jobs)\n"
        "        if [ \"$COMP_CWORD\" -eq 3 ]; then\n"
        "            COMPREPLY=($(compgen -W \"$jobs_commands\" -- \"$cur\"))\n"
        "            return 0\n"
        "        fi\n"
        "        if [ \"$COMP_CWORD\" -gt 3 ] && [[ $cur == -* ]]; then\n"
        "            COMPREPLY=($(compgen -W \"$(_lanes_opts jobs - \"${COMP_WORDS[3]}\")\" -- "
        "\"$cur\"))\n"
        "            return 0\n"
        "        fi ;;\n"
        "    esac\n"
        "    if [[ $cur == -* ]]; then\n"
        "        COMPREPLY=($(compgen -W \"$(_lanes_opts \"$cmd\")\" -- \"$cur\"))\n"
        "    else\n"
        "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "    fi\n"
        "    return 0\n"
        "}\n"
        "complete -F _lanes lanes");
}

static void zsh_script(const char *const *names, size_t n) {
    printf("#compdef lanes\n"
           "# zsh completion for lanes %s (`lanes completion zsh`).\n"
           "# The options each command takes are read from its --help.\n",
           ln_version_string());
    puts("_lanes_opts() {\n"
         "  command ${words[1]} \"$@\" --help 2>/dev/null |\n"
         "    grep -o -- '--[a-z][a-z0-9-]*' | sort -u\n"
         "}\n"
         "_lanes() {\n"
         "  local -a commands jobs_commands");
    printf("  commands=(");
    print_words(names, n);
    printf(")\n  jobs_commands=(");
    print_jobs_words();
    puts(")\n"
         "  if (( CURRENT == 2 )); then\n"
         "    compadd -- $commands --help --version\n"
         "    return\n"
         "  fi\n"
         "  case ${words[2]} in\n"
         "  help) (( CURRENT == 3 )) && compadd -- $commands; return ;;\n"
         "  completion) (( CURRENT == 3 )) && compadd -- bash zsh; return ;;\n"
         "  jobs)\n"
         "    if (( CURRENT == 4 )); then\n"
         "      compadd -- $jobs_commands\n"
         "      return\n"
         "    fi\n"
         "    if (( CURRENT > 4 )) && [[ ${words[CURRENT]} == -* ]]; then\n"
         "      compadd -- ${(f)\"$(_lanes_opts jobs - ${words[4]})\"}\n"
         "      return\n"
         "    fi ;;\n"
         "  esac\n"
         "  if [[ ${words[CURRENT]} == -* ]]; then\n"
         "    compadd -- ${(f)\"$(_lanes_opts ${words[2]})\"}\n"
         "  else\n"
         "    _files\n"
         "  fi\n"
         "}\n"
         "_lanes \"$@\"");
}

static const char usage_text[] =
    "usage: lanes completion bash|zsh\n"
    "\n"
    "Print a completion script for the shell: the commands of lanes and of\n"
    "'lanes jobs', and each command's options (read from its --help when\n"
    "completing). Installed by 'make install' as\n"
    "PREFIX/share/bash-completion/completions/lanes and\n"
    "PREFIX/share/zsh/site-functions/_lanes; to try it in a shell:\n"
    "\n"
    "  source <(lanes completion bash)\n";

int cli_completion(int argc, char **argv, const char *const *names, size_t n) {
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return CLI_EXIT_OK;
    }
    if (argc == 2 && strcmp(argv[1], "bash") == 0) {
        bash_script(names, n);
    } else if (argc == 2 && strcmp(argv[1], "zsh") == 0) {
        zsh_script(names, n);
    } else {
        if (argc == 2)
            fprintf(stderr, "lanes completion: unknown shell '%s' (bash or zsh)\n\n", argv[1]);
        fputs(usage_text, stderr);
        return CLI_EXIT_USAGE;
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

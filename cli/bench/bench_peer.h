/* bench_peer.h - the Node.js side of `lanes bench`: find node and the peer
 * scripts of bench/peers/, check the pinned packages are installed, and run
 * one peer variant in a fresh node process, reading back the JSON object it
 * prints as its last line. */
#ifndef CLI_BENCH_PEER_H
#define CLI_BENCH_PEER_H

#include "experiments/experiment.h"

#include <jansson.h>

#include <stddef.h>

typedef struct cli_peer_env {
    char node[4096];       /* the node executable */
    char node_version[32]; /* e.g. "v20.20.2" */
    char dir[4096];        /* the peers directory (the scripts) */
    char modules[4096];    /* the directory whose node_modules/ is checked */
} cli_peer_env;

/* Find node ($LANES_NODE, else the first `node` on PATH) and ask its
 * version; the peers directory is $LANES_PEERS_DIR, else
 * <source dir>/bench/peers. Returns 0, or -1 with the reason in why. */
int cli_peer_env_init(cli_peer_env *env, char *why, size_t whysize);

/* *out = *base with dir and modules moved to the peer's own directories
 * (relative to the source tree) where it declares them. 0, or -1 with the
 * reason in why (a path too long). */
int cli_peer_env_for(const cli_peer_env *base, const exp_peer *peer, cli_peer_env *out, char *why,
                     size_t whysize);

/* Can peer run here? Its scripts exist in env->dir and its npm package is
 * installed in env->modules/node_modules with the pinned version (the installed
 * version goes to version, "" for a peer without a package). Returns 0, or
 * -1 with the reason in why. */
int cli_peer_check(const cli_peer_env *env, const exp_peer *peer, char *version, size_t versionsize,
                   char *why, size_t whysize);

/* Called about once a second while a peer runs (e.g. to redraw a
 * progress line). */
typedef struct cli_peer_tick {
    void (*fn)(void *arg);
    void *arg;
} cli_peer_tick;

/* Run `node <dir>/<v->script> <v->args...> --<name>=<value>...` for the
 * nparams params, with v->env added, and parse its last output line as a
 * JSON object. Gives up (kills the process) after timeout_s. tick may be
 * NULL. Returns the object (the caller owns a reference) or NULL with the
 * reason in why (exit status and the end of its stderr). */
json_t *cli_peer_run(const cli_peer_env *env, const exp_variant *v, const exp_scale *params,
                     const long *values, size_t nparams, unsigned timeout_s,
                     const cli_peer_tick *tick, char *why, size_t whysize);

#endif

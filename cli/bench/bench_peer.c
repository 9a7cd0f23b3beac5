/* bench_peer.c - find node and run the peer scripts of bench/peers/. */
#include "bench_peer.h"

#include "bench_script.h"

#include <lanes.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_STDOUT (1u << 20) /* a peer prints one short line */

/* What a child process left behind. */
typedef struct capture {
    char *out; /* all of stdout, NUL-terminated */
    size_t outlen;
    char err[1024]; /* the end of stderr */
    size_t errlen;
    int status; /* waitpid status */
    int timed_out;
    int overflow; /* stdout grew past MAX_STDOUT: killed */
} capture;

static void keep_tail(capture *c, const char *buf, size_t n) {
    size_t room = sizeof c->err - 1;
    if (n >= room) {
        memcpy(c->err, buf + n - room, room);
        c->errlen = room;
    } else {
        if (c->errlen + n > room) { /* drop the oldest bytes */
            size_t drop = c->errlen + n - room;
            memmove(c->err, c->err + drop, c->errlen - drop);
            c->errlen -= drop;
        }
        memcpy(c->err + c->errlen, buf, n);
        c->errlen += n;
    }
    c->err[c->errlen] = '\0';
}

static int keep_out(capture *c, const char *buf, size_t n) {
    if (c->outlen + n > MAX_STDOUT) return -1;
    char *grown = realloc(c->out, c->outlen + n + 1);
    if (!grown) return -1;
    memcpy(grown + c->outlen, buf, n);
    c->outlen += n;
    grown[c->outlen] = '\0';
    c->out = grown;
    return 0;
}

/* Spawn argv with envp, stdin from /dev/null, and collect its output until
 * it exits or timeout_s passes (then it is killed); tick (may be NULL) runs
 * about once a second meanwhile. 0, or -1 with errno when it could not be
 * started. */
static int run_capture(char *const argv[], char *const envp[], unsigned timeout_s,
                       const cli_peer_tick *tick, capture *c) {
    memset(c, 0, sizeof *c);
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
        int e = errno;
        for (int i = 0; i < 2; i++) {
            if (out[i] >= 0) close(out[i]);
            if (err[i] >= 0) close(err[i]);
        }
        errno = e;
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        close(out[0]);
        close(err[0]);
        errno = rc;
        return -1;
    }

    uint64_t deadline = ln_now_ns() + (uint64_t)timeout_s * 1000000000u;
    struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    int open_fds = 2;
    while (open_fds > 0) {
        uint64_t now = ln_now_ns();
        if (now >= deadline) {
            c->timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        uint64_t left_ms = (deadline - now) / 1000000u + 1;
        int ready = poll(fds, 2, left_ms > 1000 ? 1000 : (int)left_ms);
        if (ready < 0 && errno != EINTR) break;
        if (ready == 0 && tick) tick->fn(tick->arg);
        for (int i = 0; ready > 0 && i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got > 0 && i == 0 && keep_out(c, buf, (size_t)got) != 0) {
                kill(pid, SIGKILL); /* runaway output */
                c->overflow = 1;
                got = 0;
            } else if (got > 0 && i == 1) {
                keep_tail(c, buf, (size_t)got);
            }
            if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* text on one line: each run of whitespace becomes one space, in place. */
static char *one_line(char *text) {
    char *w = text;
    for (const char *r = text; *r; r++) {
        int space = *r == '\n' || *r == '\r' || *r == '\t' || *r == ' ';
        if (!space)
            *w++ = *r;
        else if (w > text && w[-1] != ' ')
            *w++ = ' ';
    }
    *w = '\0';
    return text;
}

/* The last non-empty line of text, in place (text is modified). */
static char *last_line(char *text) {
    char *end = text + strlen(text);
    while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) *--end = '\0';
    char *start = strrchr(text, '\n');
    return start ? start + 1 : text;
}

static int find_node(char *out, size_t size) {
    const char *forced = getenv("LANES_NODE");
    if (forced && *forced) {
        snprintf(out, size, "%s", forced);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len > 0 && (size_t)snprintf(out, size, "%.*s/node", (int)len, path) < size) {
            struct stat st;
            if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return 0;
        }
        path += len + (path[len] == ':');
    }
    return -1;
}

int cli_peer_env_init(cli_peer_env *env, char *why, size_t whysize) {
    memset(env, 0, sizeof *env);
    const char *dir = getenv("LANES_PEERS_DIR");
    if (dir && *dir)
        snprintf(env->dir, sizeof env->dir, "%s", dir);
    else
        snprintf(env->dir, sizeof env->dir, "%s/bench/peers", cli_source_dir());
    snprintf(env->modules, sizeof env->modules, "%s", env->dir);
    if (find_node(env->node, sizeof env->node) != 0) {
        snprintf(why, whysize,
                 getenv("LANES_NODE") && *getenv("LANES_NODE")
                     ? "LANES_NODE is not an executable"
                     : "node (Node.js) not found on PATH");
        return -1;
    }
    char *argv[] = {env->node, "--version", NULL};
    capture c;
    if (run_capture(argv, environ, 30, NULL, &c) != 0) {
        snprintf(why, whysize, "cannot start %s: %s", env->node, strerror(errno));
        return -1;
    }
    int ok = !c.timed_out && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0 && c.out;
    if (ok)
        snprintf(env->node_version, sizeof env->node_version, "%s", last_line(c.out));
    else
        snprintf(why, whysize, "%s --version failed", env->node);
    free(c.out);
    return ok ? 0 : -1;
}

int cli_peer_env_for(const cli_peer_env *base, const exp_peer *peer, cli_peer_env *out, char *why,
                     size_t whysize) {
    *out = *base;
    const char *src = cli_source_dir();
    int n = 0;
    if (peer->dir) n = snprintf(out->dir, sizeof out->dir, "%s/%s", src, peer->dir);
    if (n >= 0 && (size_t)n < sizeof out->dir)
        n = peer->modules ? snprintf(out->modules, sizeof out->modules, "%s/%s", src, peer->modules)
                          : snprintf(out->modules, sizeof out->modules, "%s", out->dir);
    if (n < 0 || (size_t)n >= sizeof out->modules) {
        snprintf(why, whysize, "the peer's directories under %s make too long a path", src);
        return -1;
    }
    return 0;
}

int cli_peer_check(const cli_peer_env *env, const exp_peer *peer, char *version, size_t versionsize,
                   char *why, size_t whysize) {
    char path[8192];
    version[0] = '\0';
    for (size_t i = 0; i < EXP_MAX_FILES && peer->files[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", env->dir, peer->files[i]);
        if (access(path, R_OK) != 0) {
            snprintf(why, whysize, "peer script %s not found", path);
            return -1;
        }
    }
    if (!peer->package) return 0;
    snprintf(path, sizeof path, "%s/node_modules/%s/package.json", env->modules, peer->package);
    json_t *pkg = json_load_file(path, 0, NULL);
    const char *installed = json_string_value(json_object_get(pkg, "version"));
    int rc = 0;
    if (!installed) {
        snprintf(why, whysize,
                 "npm package %s is not installed in %s "
                 "(run `npm ci` there)",
                 peer->package, env->modules);
        rc = -1;
    } else if (peer->version && strcmp(installed, peer->version) != 0) {
        snprintf(why, whysize,
                 "%s %s is installed but %s is pinned "
                 "(run `npm ci` in %s)",
                 peer->package, installed, peer->version, env->modules);
        rc = -1;
    } else {
        snprintf(version, versionsize, "%s", installed);
    }
    json_decref(pkg);
    return rc;
}

/* environ plus one "NAME=value" (replacing NAME if present). The array is
 * malloc'd; its strings are borrowed. NULL if out of memory. */
static char **env_with(const char *extra) {
    size_t n = 0;
    while (environ[n]) n++;
    char **envp = malloc((n + 2) * sizeof *envp);
    if (!envp) return NULL;
    size_t k = 0, namelen = extra ? strcspn(extra, "=") + 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (!extra || strncmp(environ[i], extra, namelen) != 0) envp[k++] = environ[i];
    if (extra) envp[k++] = (char *)extra;
    envp[k] = NULL;
    return envp;
}

json_t *cli_peer_run(const cli_peer_env *env, const exp_variant *v, const exp_scale *params,
                     const long *values, size_t nparams, unsigned timeout_s,
                     const cli_peer_tick *tick, char *why, size_t whysize) {
    char script[8192];
    char opts[EXP_MAX_PARAMS][128];
    char *argv[2 + EXP_MAX_ARGS + EXP_MAX_PARAMS + 1];
    size_t argc = 0;
    snprintf(script, sizeof script, "%s/%s", env->dir, v->script);
    argv[argc++] = (char *)env->node;
    argv[argc++] = script;
    for (size_t i = 0; i < EXP_MAX_ARGS && v->args[i]; i++) argv[argc++] = (char *)v->args[i];
    for (size_t i = 0; i < nparams && i < EXP_MAX_PARAMS; i++) {
        snprintf(opts[i], sizeof opts[i], "--%s=%ld", params[i].name, values[i]);
        argv[argc++] = opts[i];
    }
    argv[argc] = NULL;

    char **envp = env_with(v->env);
    if (!envp) {
        snprintf(why, whysize, "out of memory");
        return NULL;
    }
    capture c;
    int rc = run_capture(argv, envp, timeout_s, tick, &c);
    free(envp);
    if (rc != 0) {
        snprintf(why, whysize, "cannot start %s: %s", env->node, strerror(errno));
        return NULL;
    }

    json_t *obj = NULL;
    if (c.timed_out) {
        snprintf(why, whysize, "%s: killed after %u s", v->script, timeout_s);
    } else if (c.overflow) {
        snprintf(why, whysize, "%s: killed after printing more than %u bytes", v->script,
                 MAX_STDOUT);
    } else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
        int code = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
        int sig = WIFSIGNALED(c.status) ? WTERMSIG(c.status) : 0;
        snprintf(why, whysize, "%s %s: %s %d; stderr ends: %s", v->script,
                 v->args[0] ? v->args[0] : "", sig ? "killed by signal" : "exit", sig ? sig : code,
                 c.errlen ? one_line(c.err) : "(empty)");
    } else {
        json_error_t jerr;
        obj = c.out ? json_loads(last_line(c.out), 0, &jerr) : NULL;
        if (!json_is_object(obj)) {
            snprintf(why, whysize, "%s printed no JSON object as its last line", v->script);
            json_decref(obj);
            obj = NULL;
        }
    }
    free(c.out);
    return obj;
}

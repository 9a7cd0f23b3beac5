/* jobs_flow.c - `lanes jobs URL flow FILE.json`: a tree of jobs in the
 * shape of BullMQ's FlowProducer.add argument, added with
 * ln_jobs_add_flow, and the flow relations `get` prints.
 *
 * A node: {"name": N, "queueName": Q, "data": JSON, "opts": {...},
 * "children": [node, ...]}. queueName is required on the root; a child
 * without one is in its parent's queue. opts takes jobId, delay,
 * priority, attempts, backoff ({"type": "fixed"|"exponential"|a custom
 * type, "delay": MS, "jitter": 0..1} or MS), lifo, removeOnComplete / removeOnFail (true, false, N,
 * {"count": N} or {"age": S}), failParentOnFailure,
 * continueParentOnFailure, ignoreDependencyOnFailure and
 * removeDependencyOnFailure. Any other key is an error. */
#include "jobs_flow.h"

#include "cli.h"
#include "cli_backoff.h"
#include "cli_err.h"
#include "cli_opts.h"
#include "jobs_store.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char prog[] = "lanes jobs flow";

typedef struct tree {
    ln_flow_node *nodes; /* LN_FLOW_NODES_MAX, children of one parent adjacent */
    ln_job_opts *opts;
    char **data; /* json_dumps of each node's data */
    size_t n;
    char err[256];
} tree;

static int bad(tree *t, const char *where, const char *what) {
    snprintf(t->err, sizeof t->err, "%s: %s", where, what);
    return -1;
}

static int keep_of(const json_t *v, ln_job_keep *k) {
    if (json_is_true(v)) {
        k->mode = LN_KEEP_NONE;
    } else if (json_is_false(v)) {
        k->mode = LN_KEEP_ALWAYS; /* kept whatever the worker's retention */
    } else if (json_is_integer(v)) {
        k->mode = LN_KEEP_COUNT;
        k->value = json_integer_value(v);
    } else if (json_is_object(v) && json_is_integer(json_object_get(v, "count")) &&
               json_object_size(v) == 1) {
        k->mode = LN_KEEP_COUNT;
        k->value = json_integer_value(json_object_get(v, "count"));
    } else if (json_is_object(v) && json_is_number(json_object_get(v, "age")) &&
               json_object_size(v) == 1) {
        double age = json_number_value(json_object_get(v, "age"));
        if (!(age > -9e15 && age < 9e15)) return -1; /* seconds: in ms, an int64 */
        k->mode = LN_KEEP_AGE;
        k->value = (int64_t)(age * 1000);
    } else {
        return -1;
    }
    return 0;
}

/* One key of opts into o / nd; -1 when the key or its value is not one. */
static int opt_of(const char *key, const json_t *v, ln_job_opts *o, ln_flow_node *nd) {
    int *flag = strcmp(key, "failParentOnFailure") == 0         ? &nd->fail_parent_on_failure
                : strcmp(key, "continueParentOnFailure") == 0   ? &nd->continue_parent_on_failure
                : strcmp(key, "ignoreDependencyOnFailure") == 0 ? &nd->ignore_dependency_on_failure
                : strcmp(key, "removeDependencyOnFailure") == 0 ? &nd->remove_dependency_on_failure
                : strcmp(key, "lifo") == 0                      ? &o->lifo
                                                                : NULL;
    if (flag != NULL) {
        if (!json_is_boolean(v)) return -1;
        *flag = json_is_true(v);
        return 0;
    }
    if (strcmp(key, "jobId") == 0) return (o->job_id = json_string_value(v)) ? 0 : -1;
    if (strcmp(key, "backoff") == 0) return cli_backoff_json(v, o);
    if (strcmp(key, "removeOnComplete") == 0) return keep_of(v, &o->remove_on_complete);
    if (strcmp(key, "removeOnFail") == 0) return keep_of(v, &o->remove_on_fail);
    if (!json_is_integer(v)) return -1;
    json_int_t n = json_integer_value(v);
    if (strcmp(key, "delay") == 0)
        o->delay_ms = n;
    else if (strcmp(key, "priority") == 0 && n >= 0 && n <= LN_JOB_PRIORITY_MAX)
        o->priority = (int)n;
    else if (strcmp(key, "attempts") == 0 && n >= 0 && n <= 1000000)
        o->attempts = n > 0 ? (int)n : 1; /* BullMQ's 0 is one run */
    else
        return -1;
    return 0;
}

static int node_of(tree *t, const json_t *j, size_t at, int depth);

/* The children array of node at (json 'kids') into consecutive slots. */
static int children_of(tree *t, const json_t *kids, size_t at, int depth) {
    size_t k = json_array_size(kids);
    if (k == 0) return 0;
    if (t->n + k > LN_FLOW_NODES_MAX) return bad(t, "flow", "more than LN_FLOW_NODES_MAX nodes");
    size_t first = t->n;
    t->n += k;
    t->nodes[at].children = &t->nodes[first];
    t->nodes[at].nchildren = k;
    for (size_t i = 0; i < k; i++)
        if (node_of(t, json_array_get(kids, i), first + i, depth + 1) != 0) return -1;
    return 0;
}

static int node_of(tree *t, const json_t *j, size_t at, int depth) {
    char where[48];
    snprintf(where, sizeof where, "node %zu", at);
    if (!json_is_object(j)) return bad(t, where, "not an object");
    if (depth > LN_FLOW_DEPTH_MAX) return bad(t, where, "nested deeper than LN_FLOW_DEPTH_MAX");
    ln_flow_node *nd = &t->nodes[at];
    ln_job_opts *o = &t->opts[at];
    ln_job_opts_init(o);
    nd->opts = o;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v) {
        if (strcmp(key, "name") == 0) {
            if ((nd->name = json_string_value(v)) == NULL) return bad(t, where, "name: a string");
        } else if (strcmp(key, "queueName") == 0) {
            if ((nd->queue = json_string_value(v)) == NULL)
                return bad(t, where, "queueName: a string");
        } else if (strcmp(key, "data") == 0) {
            t->data[at] = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
            if ((nd->data_json = t->data[at]) == NULL) return bad(t, where, "data: out of memory");
        } else if (strcmp(key, "opts") == 0) {
            const char *ok;
            json_t *ov;
            if (!json_is_object(v)) return bad(t, where, "opts: an object");
            json_object_foreach(v, ok, ov) {
                if (opt_of(ok, ov, o, nd) != 0) {
                    snprintf(t->err, sizeof t->err, "%s: opts.%s: unknown, or a bad value", where,
                             ok);
                    return -1;
                }
            }
        } else if (strcmp(key, "children") != 0) {
            snprintf(t->err, sizeof t->err, "%s: unknown key '%s'", where, key);
            return -1;
        } else if (!json_is_array(v)) {
            return bad(t, where, "children: an array");
        }
    }
    if (nd->name == NULL) return bad(t, where, "no name");
    return children_of(t, json_object_get(j, "children"), at, depth);
}

static void tree_free(tree *t) {
    for (size_t i = 0; i < LN_FLOW_NODES_MAX && t->data; i++) free(t->data[i]);
    free(t->data);
    free(t->nodes);
    free(t->opts);
}

/* The ids, id_size bytes each, in pre-order as ln_jobs_add_flow gives them. */
typedef struct id_cursor {
    const char *at;
    size_t id_size;
} id_cursor;

/* Print the ids (pre-order, as ln_jobs_add_flow gives them). */
static void print_ids(const ln_flow_node *nd, const char *queue, id_cursor *ids, json_t *arr) {
    const char *q = nd->queue ? nd->queue : queue;
    if (arr != NULL)
        json_array_append_new(arr,
                              json_pack("{s:o,s:o,s:o}", "queue", cli_json_text(q), "id",
                                        cli_json_text(ids->at), "name", cli_json_text(nd->name)));
    else
        printf("%s %s\n", q, ids->at);
    ids->at += ids->id_size;
    for (size_t i = 0; i < nd->nchildren; i++) print_ids(&nd->children[i], q, ids, arr);
}

/* Bytes that hold every node's id: a custom id whole (any length up to
 * LN_JOB_CUSTOM_ID_MAX), a store-numbered one in LN_JOB_ID_MAX. */
static size_t id_size_of(const tree *t) {
    size_t size = LN_JOB_ID_MAX;
    for (size_t i = 0; i < t->n; i++) {
        const char *id = t->nodes[i].opts ? t->nodes[i].opts->job_id : NULL;
        if (id != NULL && strlen(id) + 1 > size) size = strlen(id) + 1;
    }
    return size;
}

static int add_tree(ln_jobs *jobs, tree *t, int json) {
    size_t id_size = id_size_of(t);
    char *ids = calloc(t->n, id_size);
    if (ids == NULL) return cli_error(CLI_EXIT_FAILURE, prog, "LN_ENOMEM", NULL, "out of memory");
    int err = ln_jobs_add_flow(jobs, &t->nodes[0], ids, t->n, id_size);
    if (err != 0) {
        free(ids);
        return cli_jobs_fail(jobs, prog, err);
    }
    json_t *arr = json ? json_array() : NULL;
    id_cursor cur = {ids, id_size};
    print_ids(&t->nodes[0], t->nodes[0].queue, &cur, arr);
    if (arr != NULL) cli_jobs_print_json(arr);
    free(ids);
    return CLI_EXIT_OK;
}

int cli_jobs_flow(ln_jobs *jobs, int npos, const char *const *pos, int json) {
    if (npos != 1) return cli_usage(prog, "%s", "flow needs FILE.json (or - for stdin)");
    json_error_t je;
    json_t *root =
        strcmp(pos[0], "-") == 0 ? json_loadf(stdin, 0, &je) : json_load_file(pos[0], 0, &je);
    if (root == NULL)
        return cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s: %s (line %d)", pos[0],
                         je.text, je.line);
    tree t = {0};
    t.nodes = calloc(LN_FLOW_NODES_MAX, sizeof *t.nodes);
    t.opts = calloc(LN_FLOW_NODES_MAX, sizeof *t.opts);
    t.data = calloc(LN_FLOW_NODES_MAX, sizeof *t.data);
    int rc;
    if (t.nodes == NULL || t.opts == NULL || t.data == NULL) {
        rc = cli_error(CLI_EXIT_FAILURE, prog, "LN_ENOMEM", NULL, "out of memory");
    } else {
        t.n = 1;
        if (node_of(&t, root, 0, 1) != 0)
            rc = cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL, "%s: %s", pos[0], t.err);
        else if (t.nodes[0].queue == NULL)
            rc = cli_error(CLI_EXIT_USAGE, prog, "LN_EINVAL", NULL,
                           "%s: the root needs a queueName", pos[0]);
        else
            rc = add_tree(jobs, &t, json);
    }
    tree_free(&t);
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------ for get */

static const char *status_name(int s) {
    return s == LN_CHILD_PROCESSED      ? "processed"
           : s == LN_CHILD_FAILED       ? "failed"
           : s == LN_CHILD_UNSUCCESSFUL ? "unsuccessful"
                                        : "pending";
}

static void relations_json(const ln_job_children *r) {
    json_t *o = json_object(), *kids = json_array();
    json_object_set_new(
        o, "parent",
        r->parent_key ? json_pack("{s:o,s:o,s:o}", "queue", cli_json_text(r->parent_queue), "id",
                                  cli_json_text(r->parent_id), "key", cli_json_text(r->parent_key))
                      : json_null());
    for (size_t i = 0; i < r->n; i++) {
        const ln_job_child *c = &r->children[i];
        json_array_append_new(
            kids, json_pack("{s:o,s:o,s:o,s:s,s:o}", "key", cli_json_text(c->key), "queue",
                            cli_json_text(c->queue), "id", cli_json_text(c->id), "status",
                            status_name(c->status), "value", cli_json_text(c->value)));
    }
    json_object_set_new(o, "children", kids);
    char *s = json_dumps(o, JSON_COMPACT | JSON_EMBED);
    if (s != NULL) printf(",%s", s);
    free(s);
    json_decref(o);
}

void cli_jobs_flow_relations(ln_jobs *jobs, const char *queue, const char *id, int json) {
    ln_job_children r;
    if (ln_jobs_children(jobs, queue, id, &r) != 0) return;
    if (json) {
        relations_json(&r);
    } else {
        if (r.parent_key) printf("parent       %s\n", r.parent_key);
        for (size_t i = 0; i < r.n; i++)
            printf("child        %s %s%s%s\n", r.children[i].key, status_name(r.children[i].status),
                   r.children[i].value ? " " : "", r.children[i].value ? r.children[i].value : "");
    }
    ln_job_children_clear(&r);
}

/* ------------------------------------------------- for worker --exec */

/* A JSON string of s on f (jansson escapes it). */
static void put_string(FILE *f, const char *s) {
    json_t *v = cli_json_text(s);
    char *t = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    fputs(t ? t : "null", f);
    free(t);
    json_decref(v);
}

/* One object of the children of status st: key -> value (raw JSON text
 * for results, a string for reasons), or an array of keys. */
static void put_kind(FILE *f, const ln_job_children *r, int st, int raw, int keys_only) {
    int first = 1;
    fputc(keys_only ? '[' : '{', f);
    for (size_t i = 0; i < r->n; i++) {
        const ln_job_child *c = &r->children[i];
        if (c->status != st) continue;
        if (!first) fputc(',', f);
        first = 0;
        put_string(f, c->key);
        if (keys_only) continue;
        fputc(':', f);
        if (raw && c->value && ln_jobs_json_valid(c->value, strlen(c->value)))
            fputs(c->value, f);
        else if (c->value)
            put_string(f, c->value);
        else
            fputs("null", f);
    }
    fputc(keys_only ? ']' : '}', f);
}

int cli_jobs_children_file(ln_job *job, char *path, size_t size) {
    path[0] = '\0';
    ln_job_children r;
    if (ln_job_children_read(job, &r) != 0) return 0;
    if (r.n == 0) {
        ln_job_children_clear(&r);
        return 0;
    }
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/lanes-children-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        if (fd >= 0) close(fd);
        if (fd >= 0) unlink(path);
        path[0] = '\0';
        ln_job_children_clear(&r);
        return -1;
    }
    fputs("{\"values\":", f);
    put_kind(f, &r, LN_CHILD_PROCESSED, 1, 0);
    fputs(",\"failed\":", f);
    put_kind(f, &r, LN_CHILD_FAILED, 0, 0);
    fputs(",\"unsuccessful\":", f);
    put_kind(f, &r, LN_CHILD_UNSUCCESSFUL, 0, 1);
    fputs(",\"pending\":", f);
    put_kind(f, &r, LN_CHILD_PENDING, 0, 1);
    fputs("}\n", f);
    int bad = ferror(f) | (fclose(f) != 0);
    ln_job_children_clear(&r);
    if (bad) {
        unlink(path);
        path[0] = '\0';
        return -1;
    }
    return 1;
}

int cli_jobs_parent_opt(const char *parent, const char *on_failure, ln_job_opts *o, char *queue,
                        size_t size) {
    if (parent == NULL) return on_failure != NULL ? -1 : 0;
    const char *colon = strchr(parent, ':');
    size_t n = colon != NULL ? (size_t)(colon - parent) : 0;
    if (n == 0 || n >= size || colon[1] == '\0') return -1;
    memcpy(queue, parent, n);
    queue[n] = '\0';
    o->parent_queue = queue;
    o->parent_id = colon + 1; /* an id may hold ':' itself ("a:b:c") */
    if (on_failure == NULL) return 0;
    if (strcmp(on_failure, "fail") == 0)
        o->fail_parent_on_failure = 1;
    else if (strcmp(on_failure, "continue") == 0)
        o->continue_parent_on_failure = 1;
    else if (strcmp(on_failure, "ignore") == 0)
        o->ignore_dependency_on_failure = 1;
    else if (strcmp(on_failure, "remove") == 0)
        o->remove_dependency_on_failure = 1;
    else
        return -1;
    return 0;
}

/* conf_flowtree.h - flow trees for the conformance cases: a tree written
 * as a table of rows, one a node (its parent's custom id, queue, name,
 * custom id), laid out the way ln_jobs_add_flow takes it (the children
 * of each node side by side), and the call that adds it.
 *
 *   conf_tree t;
 *   const conf_tree_row rows[] = {{NULL, q, "parent", "r"},
 *                                 {"r", q2, "mid", "a"},
 *                                 {"a", q, "leaf", "a1"},
 *                                 {"r", q, "leaf", "b"}};
 *   CONF_TREE_MAKE(&t, rows);           // r -> a -> a1, and r -> b
 *   conf_tree_opts(&t, "r")->delay_ms = 5000;
 *   conf_tree_add(c, &t);
 */
#ifndef LN_CONF_FLOWTREE_H
#define LN_CONF_FLOWTREE_H

#include "conf.h"

#define CONF_TREE_MAX 8

typedef struct conf_tree_row {
    const char *parent; /* the parent's custom id; NULL: the root (the first row only) */
    const char *queue;  /* NULL: the parent's */
    const char *name;
    const char *id; /* the custom id (NULL: numbered by the store; then no row's parent) */
} conf_tree_row;

/* A tree's nodes and their options (node[0] is the root). It points into
 * itself: pass it by pointer, never copy it. */
typedef struct conf_tree {
    ln_flow_node node[CONF_TREE_MAX];
    ln_job_opts opts[CONF_TREE_MAX];
    size_t n;
} conf_tree;

/* Lays the n rows out into t, breadth first (siblings in their rows'
 * order), each node with default options and its custom id; CHECKs that
 * every row but the first has its parent in the tree. The root. */
ln_flow_node *conf_tree_make(conf_tree *t, const conf_tree_row *rows, size_t n);
#define CONF_TREE_MAKE(t, rows) conf_tree_make((t), (rows), CONF_NELEM(rows))

/* The node, and its options, of custom id id (CHECKed to be in t). */
ln_flow_node *conf_tree_node(conf_tree *t, const char *id);
ln_job_opts *conf_tree_opts(conf_tree *t, const char *id);

/* Adds the flow of root, nnodes nodes in all, with a buffer for their
 * ids; CHECKs it is added (the store's message on stderr if not). */
void conf_flow_add(conf_ctx *c, const ln_flow_node *root, size_t nnodes);
/* conf_flow_add of t's root. */
void conf_tree_add(conf_ctx *c, conf_tree *t);

/* Adds job id (name, data "1") to queue with parent (pq, pid), or none
 * (pq NULL); CHECKs success. */
void conf_add_kid(conf_ctx *c, const char *queue, const char *id, const char *name, const char *pq,
                  const char *pid);

/* CHECKs the children job id of queue records (ln_jobs_children), in its
 * order: want is "ID:STATUS " for each, STATUS one of pending, processed,
 * failed, unsuccessful (e.g. "a:processed f:pending "). */
void conf_check_children(conf_ctx *c, const char *queue, const char *id, const char *want);

#endif

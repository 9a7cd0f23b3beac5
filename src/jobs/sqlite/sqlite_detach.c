/* sqlite_detach.c - BullMQ's job.removeChildDependency() on the SQLite
 * backend (jobs_flows.h ln_jobs_remove_child_dependency): a pending child
 * leaves its parent's lanes_deps, the parent's deps count drops, and a
 * parent in waiting-children left with none is released as the delete of
 * its last pending child releases it (ln__sq_flow_release: ready, or
 * delayed by its own delay, with its event). Primary-key statements only,
 * inside the edit method's write transaction. */
#include "sqlite_int.h"

#include "internal.h"

#define WHAT "remove child dependency"

int ln__sq_edit_detach(sq_be *be, int64_t rid, int64_t now, ln__jobs_edit *e) {
    e->removed = 0;
    int64_t prid = 0, found = 0; /* rowids start at 1: 0 is no parent */
    int err = ln__sq_run_once(
        be, WHAT, &prid, "SELECT coalesce(parent_rid, 0) FROM lanes_jobs WHERE rid = ?1", "i", rid);
    if (err != 0 || prid == 0) return err;
    if ((err = ln__sq_run_once(be, WHAT, &found, "SELECT 1 FROM lanes_jobs WHERE rid = ?1", "i",
                               prid)) != 0)
        return err;
    if (!found)
        return ln__jobs_be_err(&be->base, LN_ENOENT, "the parent of job '%s' no longer exists",
                               e->id);
    if ((err = ln__sq_run_once(be, WHAT, &found,
                               "DELETE FROM lanes_deps WHERE parent_rid = ?1 AND child_rid = ?2 "
                               "AND status = 0 RETURNING 1",
                               "ii", prid, rid)) != 0 ||
        !found)
        return err; /* not pending: processed, failed, or never a dependency */
    if ((err =
             ln__sq_run_once(be, WHAT, NULL, "UPDATE lanes_jobs SET deps = deps - 1 WHERE rid = ?1",
                             "i", prid)) != 0 ||
        (err = ln__sq_flow_release(be, prid, 0, now)) != 0)
        return err;
    err = ln__sq_run_once(be, WHAT, NULL,
                          "UPDATE lanes_jobs SET parent_rid = NULL, pflags = pflags & ?2 WHERE "
                          "rid = ?1",
                          "ii", rid, (int64_t)SQ_FLOW_PARENT);
    if (err == 0) e->removed = 1;
    return err;
}

/* fuzz_validate.c - the checks of names and options a caller passes
 * (validate.c: queue names, job ids, other names, traceparent, the
 * options of an add). Input: "A<tab>B<tab>C..." fields; each field is tried
 * as every kind of name, and the options are built from them.
 * Checks: 0 or LN_EINVAL with a terminated, non-empty reason; what is
 * refused as a name is refused inside the options too. */
#include "jobs/front/front.h"
#include "fuzz_common.h"
#include "lanes/jobs.h"

static void check_rc(int rc, const char *err, size_t size, const char *what) {
    FUZZ_CHECK(rc == 0 || rc == LN_EINVAL, "%s rc %d", what, rc);
    if (rc != 0) FUZZ_CHECK(fuzz_terminated(err, size) && err[0] != '\0', "%s: no reason", what);
}

static int64_t num(const char *s) {
    return s != NULL ? strtoll(s, NULL, 10) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = fuzz_cstr(data, size), *cur = buf, err[512];
    const char *f[16] = {0};
    for (int i = 0; i < 16; i++) f[i] = fuzz_field(&cur);
    const char *name = f[0] != NULL ? f[0] : "";
    check_rc(ln__jobs_check_queue(name, err, sizeof err), err, sizeof err, "queue");
    int id_rc = ln__jobs_check_id(name, err, sizeof err);
    check_rc(id_rc, err, sizeof err, "id");
    check_rc(ln__jobs_check_name(name, 64, "name", err, sizeof err), err, sizeof err, "name");
    int tp = ln__jobs_check_traceparent(name);
    FUZZ_CHECK(tp == 0 || tp == 1, "traceparent %d", tp);
    ln_job_opts o;
    ln_job_opts_init(&o);
    o.job_id = name;
    o.traceparent = f[1] != NULL && f[1][0] != '\0' ? f[1] : NULL;
    o.dedup_id = f[2] != NULL && f[2][0] != '\0' ? f[2] : NULL;
    o.delay_ms = num(f[3]);
    o.priority = (int)num(f[4]);
    o.attempts = (int)num(f[5]);
    o.timeout_ms = num(f[6]);
    o.dedup_ttl_ms = num(f[7]);
    o.backoff_jitter = f[8] != NULL ? strtod(f[8], NULL) : 0; /* "nan", "inf" too */
    o.backoff = (int)num(f[9]);
    o.backoff_type = f[10] != NULL && f[10][0] != '\0' ? f[10] : NULL;
    o.tracestate = f[11];
    o.remove_on_complete.mode = (int)num(f[12]);
    o.remove_on_complete.value = num(f[13]);
    o.parent_queue = f[14] != NULL && f[14][0] != '\0' ? f[14] : NULL;
    o.parent_id = f[15] != NULL && f[15][0] != '\0' ? f[15] : NULL;
    int rc = ln__jobs_check_opts(&o, err, sizeof err);
    check_rc(rc, err, sizeof err, "opts");
    FUZZ_CHECK(id_rc == 0 || rc != 0, "opts take the job id '%s' check_id refuses", name);
    free(buf);
    return 0;
}

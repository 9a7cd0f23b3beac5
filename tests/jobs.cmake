# Tests of the durable job queue (include/lanes/jobs.h, src/jobs, the
# `lanes jobs` / `lanes worker` commands). Built when src/jobs is (sqlite3
# and jansson found; tests/CMakeLists.txt includes this area only then).

# The SQLite store from inside: bad files, schema versions and upgrades,
# query plans, counters, lock waits, backend-level fencing, allocation
# failures. (What every store promises is in the conformance suite below.)
ln_test(NAME test_jobs_api SOURCES test_jobs_api.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 120 LABELS jobs)

# The conformance suite of the jobs contract: one program, one set of cases
# (tests/conformance/conf_*.c), run once per store. The redis run needs
# LANES_TEST_REDIS_URL (scripts/with-services.sh) and skips without it.
set(LN_CONF_SOURCES
    conformance/conf_main.c conformance/conf_util.c conformance/conf_add.c
    conformance/conf_admin.c conformance/conf_worker.c
    conformance/conf_lease.c conformance/conf_badinput.c
    conformance/conf_rules.c conformance/conf_json.c conformance/conf_fields.c
    conformance/conf_timeout.c conformance/conf_events.c)
set(LN_CONF_LIBS "")
if(LN_HAVE_REDIS)
  set(LN_CONF_LIBS PkgConfig::HIREDIS) # only to delete a run's keys after it
endif()
ln_test(NAME test_conformance TEST conformance/sqlite SOURCES ${LN_CONF_SOURCES}
        LIBS ${LN_CONF_LIBS} ARGS sqlite TIMEOUT 120 LABELS "jobs;conformance")
if(LN_HAVE_REDIS)
  target_compile_definitions(test_conformance PRIVATE CONF_HAVE_HIREDIS=1)
  ln_test(NAME test_conformance TEST conformance/redis ARGS redis TIMEOUT 120
          LABELS "jobs;redis;conformance")
endif()

# Process-level tests fork, kill -9, SIGSTOP and run the `lanes` binary;
# sanitizers only make their timing flaky, so they run in the plain tree.
if(TARGET lanes_cli)
  ln_test(NAME test_jobs_cli SOURCES test_jobs_cli.c
          LIBS PkgConfig::JANSSON TIMEOUT 150 NO_SANITIZE LABELS jobs)
  target_compile_definitions(test_jobs_cli PRIVATE
                             LANES_BIN="$<TARGET_FILE:lanes_cli>")
  add_dependencies(test_jobs_cli lanes_cli)
endif()
ln_test(NAME test_jobs_crash SOURCES test_jobs_crash.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 180 NO_SANITIZE LABELS jobs)

# The SQLite store's file under damage and on a full disk: corrupt and
# truncated stores fail with LN_ECORRUPT instead of stalling; a small tmpfs
# (root in a private mount namespace, else skipped) fills up.
ln_test(NAME test_jobs_disk SOURCES test_jobs_disk.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 120 LABELS jobs)

# Chaos on every store (kill -9, SIGSTOP past the lease, SIGTERM storms),
# through the public API; the redis run skips without LANES_TEST_REDIS_URL.
ln_test(NAME test_chaos TEST chaos/sqlite SOURCES test_chaos.c LIBS ${LN_CONF_LIBS}
        ARGS sqlite TIMEOUT 120 NO_SANITIZE LABELS jobs)
if(LN_HAVE_REDIS)
  target_compile_definitions(test_chaos PRIVATE CHAOS_HAVE_HIREDIS=1)
  ln_test(NAME test_chaos TEST chaos/redis ARGS redis TIMEOUT 120 NO_SANITIZE
          LABELS "jobs;redis")
endif()

# Tests of the durable job queue (include/lanes/jobs.h, src/jobs, the
# `lanes jobs` / `lanes worker` commands). Built when src/jobs is (sqlite3
# and jansson found; tests/CMakeLists.txt includes this area only then).

# The SQLite store from inside: bad files, schema versions and upgrades,
# query plans, counters, lock waits, backend-level fencing, allocation
# failures. (What every store promises is in the conformance suite below.)
ln_test(NAME test_jobs_api SOURCES jobs/test_jobs_api.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 120 LABELS jobs)
# A stale deduplication id on SQLite (its holder deleted behind lanes' back).
ln_test(NAME test_dedup_stale SOURCES jobs/test_dedup_stale.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 60 LABELS jobs)
# The admin calls on SQLite: counts per priority read under a writer.
ln_test(NAME test_edit_sqlite SOURCES jobs/test_edit_sqlite.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 60 LABELS jobs)
# remove_tree's cap and a drain that fails midway, on both stores.
if(LN_HAVE_REDIS)
  ln_test(NAME test_remove_tree SOURCES jobs/test_remove_tree.c
          LIBS PkgConfig::SQLITE3 PkgConfig::HIREDIS TIMEOUT 60 LABELS jobs)
  target_compile_definitions(test_remove_tree PRIVATE RT_HAVE_HIREDIS=1)
else()
  ln_test(NAME test_remove_tree SOURCES jobs/test_remove_tree.c
          LIBS PkgConfig::SQLITE3 TIMEOUT 60 LABELS jobs)
endif()

# The conformance suite of the jobs contract: one program, one set of cases,
# run once per store. Its sources are every tests/conformance/conf_*.c; its
# cases are the CONF_CASE(name) lines of tests/conformance/conf_list.h, the
# one place a case is registered (the runner's table and declarations come
# from it). conformance/<store> runs every case in one process, each case
# in a child of its own; `test_conformance STORE CASE...` runs some. The
# redis run needs LANES_TEST_REDIS_URL (scripts/with-services.sh) and
# skips without it.
file(GLOB LN_CONF_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/conf_*.c)
set(LN_CONF_LIBS "")
if(LN_HAVE_REDIS)
  set(LN_CONF_LIBS PkgConfig::HIREDIS) # only to delete a run's keys after it
endif()
add_executable(test_conformance ${LN_CONF_SOURCES})
target_link_libraries(test_conformance PRIVATE ln_testutil ${LN_AREA_LIBS} ${LN_CONF_LIBS})
# A case function left out of conf_list.h has no prototype: warned (an
# error under LN_WERROR), so no case is written and then never run.
target_compile_options(test_conformance PRIVATE -Wmissing-prototypes)
if(LN_HAVE_REDIS)
  target_compile_definitions(test_conformance PRIVATE CONF_HAVE_HIREDIS=1)
endif()
if(LN_HAVE_POSTGRES)
  # only to drop a run's schema after it
  target_link_libraries(test_conformance PRIVATE PkgConfig::LIBPQ)
  target_compile_definitions(test_conformance PRIVATE CONF_HAVE_LIBPQ=1)
endif()
# ln_conformance(STORE [CASES name...] [LABELS label...]): conformance/STORE,
# every case of the suite on that store, or only the CASES named (a store
# that does not pass the whole suite yet says which cases it passes).
function(ln_conformance store)
  cmake_parse_arguments(C "" "" "CASES;LABELS" ${ARGN})
  ln_test(NAME test_conformance TEST conformance/${store} ARGS ${store} ${C_CASES}
          TIMEOUT 300 LABELS "jobs;conformance;${C_LABELS}")
endfunction()
ln_conformance(sqlite)
if(LN_HAVE_REDIS)
  ln_conformance(redis LABELS redis)
endif()
# The PostgreSQL store passes part of the suite so far: the cases it passes,
# one a line, in conformance/postgres_cases.txt (issue #28). Needs
# LANES_TEST_PG_URL (scripts/with-services.sh) and skips without it.
if(LN_HAVE_POSTGRES)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${CMAKE_CURRENT_SOURCE_DIR}/conformance/postgres_cases.txt)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/conformance/postgres_cases.txt ln_pg_cases
       REGEX "^[a-z0-9_]+$")
  ln_conformance(postgres CASES ${ln_pg_cases} LABELS postgres)
endif()

# Process-level tests fork, kill -9, SIGSTOP and run the `lanes` binary;
# sanitizers only make their timing flaky, so they run in the plain tree.
if(TARGET lanes_cli)
  # `lanes jobs` subcommands, `lanes worker --exec`, what `lanes worker`
  # says (helpers: tests/jobs/jobs_cli_test.h).
  foreach(part admin exec worker exit badname start)
    ln_test(NAME test_jobs_cli_${part} SOURCES cli/test_jobs_cli_${part}.c
            LIBS PkgConfig::JANSSON PkgConfig::SQLITE3 TIMEOUT 150 NO_SANITIZE LABELS jobs)
    target_compile_definitions(test_jobs_cli_${part} PRIVATE
                               LANES_BIN="$<TARGET_FILE:lanes_cli>")
    add_dependencies(test_jobs_cli_${part} lanes_cli)
  endforeach()
  # `lanes jobs URL cancel` of a job `lanes worker --exec` runs (sqlite,
  # and Redis under scripts/with-services.sh).
  add_test(NAME test_worker_cancel
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_worker_cancel.sh $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_worker_cancel PROPERTIES TIMEOUT 60 LABELS "plain;jobs")
  # `lanes jobs schedule | unschedule | schedules` on sqlite (shell).
  add_test(NAME test_sched_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_sched_cli.sh
                                       $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_sched_cli PROPERTIES TIMEOUT 60 LABELS "plain;jobs")
  # `lanes jobs flow`, `get`'s relations and LANES_CHILDREN_FILE.
  add_test(NAME test_flow_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_flow_cli.sh
                                      $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_flow_cli PROPERTIES TIMEOUT 60 LABELS "jobs;plain")
  # `lanes jobs change-priority | change-delay | update-data | dedup`.
  add_test(NAME test_edit_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_edit_cli.sh
                                      $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_edit_cli PROPERTIES TIMEOUT 60 LABELS "jobs;plain")
endif()
ln_test(NAME test_jobs_crash SOURCES jobs/test_jobs_crash.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 180 NO_SANITIZE LABELS jobs)

# The SQLite store's file under damage and on a full disk: corrupt and
# truncated stores fail with LN_ECORRUPT instead of stalling; a small tmpfs
# (root in a private mount namespace, else skipped) fills up.
ln_test(NAME test_jobs_disk SOURCES jobs/test_jobs_disk.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 120 LABELS jobs)

# Chaos on every store (kill -9, SIGSTOP past the lease, SIGTERM storms),
# through the public API; the redis run skips without LANES_TEST_REDIS_URL.
ln_test(NAME test_chaos TEST chaos/sqlite SOURCES jobs/test_chaos.c LIBS ${LN_CONF_LIBS}
        ARGS sqlite TIMEOUT 120 NO_SANITIZE LABELS jobs)
if(LN_HAVE_REDIS)
  target_compile_definitions(test_chaos PRIVATE CHAOS_HAVE_HIREDIS=1)
  ln_test(NAME test_chaos TEST chaos/redis ARGS redis TIMEOUT 120 NO_SANITIZE
          LABELS "jobs;redis")
endif()

# The retry delay's computing core (src/jobs/model/backoff.[ch]): builtin types,
# BullMQ's jitter formula for given draws, the per-thread draw.
ln_test(NAME test_backoff SOURCES jobs/test_backoff.c TIMEOUT 60 LABELS jobs)
# The public UTF-8 checks (include/lanes/jobs_text.h) the command uses.
ln_test(NAME test_jobs_text SOURCES jobs/test_jobs_text.c TIMEOUT 60 LABELS jobs)

# The job schedulers' computing core (src/jobs/model/cron.[ch]): parsing, fire
# times against a committed copy of cron-parser's answers (golden), and,
# in the plain tree only, against cron-parser run now by Node (skips
# without node or tests/interop/node_modules; about 25 s).
ln_test(NAME test_cron SOURCES jobs/test_cron.c TIMEOUT 60 LABELS jobs)
target_compile_definitions(test_cron PRIVATE LN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
ln_test(NAME test_cron TEST cron/differential ARGS differential TIMEOUT 180
        NO_SANITIZE LABELS jobs)
# It runs Node over thousands of patterns (~30 s quiet; over 60 s on a
# loaded machine): the case's own time limit follows the CTest one.
set_tests_properties(cron/differential PROPERTIES ENVIRONMENT LN_TEST_TIMEOUT=170)
# BullMQ's own `every` Lua, evaluated by Redis (scripts/with-services.sh),
# against ln__every_next; skips without LANES_TEST_REDIS_URL.
ln_test(NAME test_cron TEST cron/every_lua ARGS every_lua TIMEOUT 60
        NO_SANITIZE LABELS "jobs;redis")

# `lanes worker --metrics`: /metrics scraped while a worker runs and parsed
# by Debian's python3-prometheus-client (skipped, exit 77, without it).
find_package(Python3 COMPONENTS Interpreter)
if(TARGET lanes_cli AND Python3_Interpreter_FOUND)
  add_test(NAME test_worker_metrics
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_worker_metrics.py
                   $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_worker_metrics PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       LABELS "plain;jobs;metrics")
endif()

# ln_jobs_workers without waiting or a server: the heartbeat's due test on
# a fake clock, the SQLite listing window and pruning (rows with chosen
# heartbeat times), and the parser of Redis's CLIENT LIST text.
ln_test(NAME test_workers SOURCES jobs/test_workers.c
        LIBS PkgConfig::SQLITE3 TIMEOUT 60 LABELS jobs)
if(LN_HAVE_REDIS)
  target_compile_definitions(test_workers PRIVATE WK_HAVE_REDIS=1)
endif()

# `lanes jobs` and `lanes worker` with job ids longer than 127 bytes.
if(TARGET lanes_cli)
  add_test(NAME jobs_cli_longid
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_jobs_longid_cli.sh
                   $<TARGET_FILE:lanes_cli>)
  set_tests_properties(jobs_cli_longid PROPERTIES TIMEOUT 60 LABELS "plain;jobs")
endif()

# The dispatcher's side of ln_job_wait_children (src/jobs/front/dynflow.c) on a
# bare worker struct: a job moved to waiting-children is freed with nothing
# recorded, after any renewal in flight.
ln_test(NAME test_dynflow_worker SOURCES jobs/test_dynflow_worker.c TIMEOUT 30 LABELS jobs)

# `lanes jobs remove --unprocessed-children` (sqlite, and Redis under
# scripts/with-services.sh).
if(TARGET lanes_cli)
  add_test(NAME test_unprocessed_cli
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_unprocessed_cli.sh $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_unprocessed_cli PROPERTIES TIMEOUT 60 LABELS "plain;jobs")
endif()

# `lanes worker --exec-persistent` with the Python handler library
# (sqlite, and Redis under scripts/with-services.sh).
if(TARGET lanes_cli)
  add_test(NAME test_worker_persist
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/test_worker_persist.sh $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_worker_persist PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                                                   LABELS "plain;jobs")
endif()

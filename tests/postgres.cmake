# PostgreSQL store of lanes jobs: interop with stock BullMQ 6.7.0's own
# PostgreSQL backend (docs/postgres.md, docs/internals/postgres.md).
# What every store promises is checked by the conformance suite
# (conformance/postgres in jobs.cmake); the tests here are PostgreSQL's own.
#
# test_pg_interop/<case>  the lanes CLI (`lanes jobs`, `lanes worker --exec`)
#                      against BullMQ in Node (tests/interop/pg_bullmq.mjs),
#                      both directions, driven by postgres/test_pg_interop.sh
#                      (each case described there)
#
# test_pg_migrate         a database lanes prepared first: BullMQ's
#                      migrate: true applies its migrations on top, a Node
#                      Worker runs lanes' jobs, lanes runs Node's
#                      (postgres/test_pg_migrate.sh)
#
# They read LANES_TEST_PG_URL (scripts/with-services.sh sets it in
# `make test`) and exit 77 (skipped) without it.

if(NOT LN_HAVE_POSTGRES OR NOT TARGET lanes_cli)
  return()
endif()

# Forking and kill -9: plain tree only (no sanitizer runs).
foreach(case node_to_c c_to_node retries_both_ways events events_notify stalled
             stalled_c_to_node)
  add_test(NAME test_pg_interop/${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/postgres/test_pg_interop.sh ${case}
                   $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_pg_interop/${case} PROPERTIES TIMEOUT 120
                       SKIP_RETURN_CODE 77 LABELS "plain;postgres")
endforeach()
add_test(NAME test_pg_migrate
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/postgres/test_pg_migrate.sh $<TARGET_FILE:lanes_cli>)
set_tests_properties(test_pg_migrate PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                     LABELS "plain;postgres")

# A postgres:// URL's query string read without overrunning it (plain and
# under the sanitizers): no server needed, the open fails at a closed port.
ln_test(NAME test_pg_url SOURCES postgres/test_pg_url.c TIMEOUT 60 LABELS "jobs;postgres")

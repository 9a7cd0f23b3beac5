# Redis backend of lanes jobs: BullMQ 6.7 wire compatibility (docs/redis.md,
# docs/internals/redis-layout.md).
# What every store promises is checked by the conformance suite
# (tests/conformance, registered in jobs.cmake as conformance/redis); the
# tests here are Redis's own: layout, BullMQ interop, connection faults.
#
# test_redis_scripts   the Lua the build embedded (redis_scripts.[ch]) is
#                      what scripts/embed-lua.sh makes of src/jobs/redis/lua/*.lua
# test_redis_jobs      the backend through the public API, the stored layout
#                      checked key by key (C, forked cases)
# test_redis_conn      its connections: bad URLs, NOSCRIPT, CLIENT KILL, a
#                      silent server, ACL logins, the eviction warning
# test_redis_wait      idle workers block on BullMQ's marker (no polling),
#                      counted on a private redis-server
# test_redis_interop/<case>  against stock BullMQ 6.7.0 in Node.js
#                      (tests/interop, pinned by its package-lock.json), driven
#                      by test_redis_interop.sh; redis_peer is the C side
#
# Tests needing Redis read LANES_TEST_REDIS_URL (scripts/with-services.sh
# sets it in `make test`) and exit 77 (skipped) without it.

if(NOT LN_HAVE_REDIS)
  return()
endif()

add_test(NAME test_redis_scripts
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/redis/test_redis_scripts.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/src/jobs)
set_tests_properties(test_redis_scripts PROPERTIES TIMEOUT 30 LABELS "plain")


ln_test(NAME test_redis_jobs SOURCES redis/test_redis_jobs.c LIBS PkgConfig::HIREDIS m
        TIMEOUT 120)
ln_test(NAME test_redis_conn SOURCES redis/test_redis_conn.c LIBS PkgConfig::HIREDIS
        TIMEOUT 120)
ln_test(NAME test_redis_wait SOURCES redis/test_redis_wait.c LIBS PkgConfig::HIREDIS
        TIMEOUT 120)

add_executable(redis_peer interop/redis_peer.c)
target_link_libraries(redis_peer PRIVATE lanes_jobs_static)
# The C side of the backoff cases (tests/interop/cases/backoff.sh), beside it.
add_executable(backoff_peer interop/backoff_peer.c)
target_link_libraries(backoff_peer PRIVATE lanes_jobs_static)
# The C side of the dynflow interop cases (interop/cases/dynflow.sh).
add_executable(dynflow_peer interop/dynflow_peer.c)
target_link_libraries(dynflow_peer PRIVATE lanes_jobs_static)
# The C side of the flowmore interop cases (interop/cases/flowmore.sh).
add_executable(flowmore_peer interop/flowmore_peer.c)
target_link_libraries(flowmore_peer PRIVATE lanes_jobs_static)

set(LN_REDIS_CLI "")
if(TARGET lanes_cli)
  set(LN_REDIS_CLI $<TARGET_FILE:lanes_cli>)
endif()
# Forking, kill -9 and server restarts: plain tree only (no sanitizer runs).
foreach(case node_to_c c_to_node mixed kill9 renew restart wake trace board json
        gconc obliterate runat outcomes dedup waitfor workers metrics
        longid cancel sched_node_to_c sched_c_to_node sched_cron_node_to_c sched_mixed
        ratelimit ratelimit_node ratelimit_meta ratelimit_error ratelimit_idle
        flow_node_to_c flow_c_to_node
        no_active_event
        drain retry_clean stacktrace halfid remove_iter live cancel_child cancel_iter
        backoff_node_to_c backoff_c_to_node
        remove_tree_node_to_c remove_tree_c_to_node remove_tree_refused
        dynflow_node_to_c dynflow_c_to_node dynflow_add_node_to_c dynflow_add_c_to_node
        dynflow_existing
        dedup_next_node_to_c dedup_next_c_to_node dedup_next_stale dedup_next_reschedule
        exec_wait_children
        flowmore_unprocessed flowmore_wait_child flowmore_flow_parent
        flow_removed_child
        flowmore_unprocessed_locked flowmore_unprocessed_c_to_node flowmore_wait_child_node
        flowmore_flow_parent_node
        dedup_next_stalled
        edit_c_to_node edit_node_to_c promote_all_c_to_node promote_all_node_to_c
        trim_events_c_to_node trim_events_node_to_c
        edit_active_priority_node edit_dedup_stale_key
        schedrec_node_died schedrec_node_made_next schedrec_node_died_cron
        schedrec_node_stalled_c_take schedrec_c_died_node_take schedrec_node_died_node_take
        schedrec_rjk_stalled
        sched_colon_node_to_c sched_colon_c_to_node
        logs_keep_node_to_c logs_both_ways detach_c_to_node detach_node_to_c
        keep_c_worker keep_node_worker
        obliterate_c_on_node obliterate_same_as_node obliterate_active obliterate_node_on_c
        retry_completed_c_on_node retry_completed_node_on_c
        drained_c_vs_node)
  add_test(NAME test_redis_interop/${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_redis_interop.sh ${case}
                   $<TARGET_FILE:redis_peer> ${LN_REDIS_CLI})
  set_tests_properties(test_redis_interop/${case} PROPERTIES TIMEOUT 120
                       SKIP_RETURN_CODE 77 LABELS "plain;redis")
endforeach()

# test_metrics_lua   the per-minute metrics arithmetic with a fake clock,
#                    three ways: lanes' Lua (lib.lua collect_metrics), stock
#                    BullMQ 6.7.0's collectMetrics.lua and the C
#                    ln_job_metrics_record leave the same hash and list
#                    (docs/internals/metrics.md)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME test_metrics_lua
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/redis/test_metrics_lua.py
                   ${PROJECT_SOURCE_DIR} $<TARGET_FILE:lanes_jobs>)
  set_tests_properties(test_metrics_lua PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                       LABELS "plain;redis")
endif()

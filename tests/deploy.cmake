# Deployment (docs/deploy.md):
#   test_deploy   the systemd units of deploy/: `systemd-analyze verify`
#                 with no warning, hardened (tests/deploy/test_deploy.sh; skipped,
#                 reason systemd, without systemd-analyze)
#   test_healthz  a private redis-server stopped and started again: `lanes
#                 dash` /healthz 200, 503, 200 and its outage lines; a
#                 `lanes worker` started before Redis waits and runs the job
#                 (LANES_STORE, a password file), its /healthz; --fail-fast
if(NOT TARGET lanes_cli)
  return()
endif()
add_test(NAME test_deploy
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/deploy/test_deploy.sh ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:lanes_cli>)
set_tests_properties(test_deploy PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                     LABELS "plain;deploy")
find_package(Python3 COMPONENTS Interpreter)
if(LN_HAVE_REDIS AND Python3_Interpreter_FOUND)
  add_test(NAME test_healthz
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/deploy/test_healthz.py
                   $<TARGET_FILE:lanes_cli>)
  set_tests_properties(test_healthz PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                       LABELS "plain;deploy;redis")
endif()
# test_worker_log: the lines of `lanes worker` (times, the queue on every
# JSON line, "retry N/M in D ms" apart from "for good", released at a
# graceful stop): tests/deploy/test_worker_log.sh
add_test(NAME test_worker_log
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/deploy/test_worker_log.sh $<TARGET_FILE:lanes_cli>)
set_tests_properties(test_worker_log PROPERTIES TIMEOUT 120 LABELS "plain;deploy;jobs")

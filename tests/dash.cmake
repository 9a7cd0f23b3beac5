# Tests of `lanes dash` (cli/cmd_dash.c, cli/dash_*.c; docs/dash.md), on
# both stores; the redis runs need LANES_TEST_REDIS_URL
# (scripts/with-services.sh) and skip (77) without it.
#
# dash/<store>: the page in a real browser, Debian's chromium driven by
#   playwright-core (tests/dash/package.json, pinned by its lockfile;
#   scripts/install-deps.sh runs npm ci there): counts, a job's data,
#   retry / promote / remove and the store after them, writes refused
#   without the token and under --read-only, a job's data and priority
#   edited through its page. Writes the queue page's
#   screenshot to tests/dash/dash-<store>.png in the build tree (the
#   README's docs/dash.png is one of them). Skips without chromium.
# dash/api-<store>: the JSON API at its edges: names escaped in paths, bad
#   arguments, unknown endpoints and methods, the Host check, the loopback
#   write header; every error JSON.
# dash/edit-<store>: the edit endpoints (a job's priority, delay, data;
#   promote all, counts per priority, a dedup id): success, refused state,
#   bad input, --read-only and the write header.
# dash/metrics-<store>: /metrics read by Debian's python3-prometheus-client
#   (the system python3, where Debian installs it). Skips without it.
# dash/doors-sqlite: the doors (docs/dash.md, "Access and limits"): the
#   Host rule and --allow-host, --token-file on loopback, 200 stalled and
#   200 trickling connections while a normal request is answered within
#   3 s, --request-timeout, a full server's 503 and its idle keep-alive
#   connections closed first. Store-independent: SQLite only.
if(NOT TARGET lanes_cli)
  return()
endif()
find_program(LN_NODE node)
set(LN_DASH_STORES sqlite)
if(LN_HAVE_REDIS)
  list(APPEND LN_DASH_STORES redis)
endif()
set(LN_DASH_OUT ${CMAKE_CURRENT_BINARY_DIR}/dash)
file(MAKE_DIRECTORY ${LN_DASH_OUT})
foreach(store ${LN_DASH_STORES})
  if(LN_NODE)
    add_test(NAME dash/${store}
             COMMAND ${LN_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/dash/dash.test.mjs ${store}
                     $<TARGET_FILE:lanes_cli> ${LN_DASH_OUT})
    set_tests_properties(dash/${store} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                         LABELS "plain;jobs;dash")
  endif()
  # The Python tests: dash/NAME-STORE runs tests/dash/test_NAME.py, in the
  # system python3 (Debian's packages), with a timeout of its own, never
  # under python -O (their checks are check(), but keep it out anyway).
  foreach(py api:60 edit:90 metrics:60)
    string(REPLACE ":" ";" py ${py})
    list(GET py 0 name)
    list(GET py 1 timeout)
    add_test(NAME dash/${name}-${store}
             COMMAND /usr/bin/env -u PYTHONPATH -u PYTHONOPTIMIZE PYTHONDONTWRITEBYTECODE=1
                     /usr/bin/python3
                     ${CMAKE_CURRENT_SOURCE_DIR}/dash/test_${name}.py ${store}
                     $<TARGET_FILE:lanes_cli>)
    set_tests_properties(dash/${name}-${store} PROPERTIES TIMEOUT ${timeout}
                         SKIP_RETURN_CODE 77 LABELS "plain;jobs;dash")
  endforeach()
endforeach()
add_test(NAME dash/doors-sqlite
         COMMAND /usr/bin/env -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3
                 ${CMAKE_CURRENT_SOURCE_DIR}/dash/test_doors.py sqlite $<TARGET_FILE:lanes_cli>)
set_tests_properties(dash/doors-sqlite PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                     LABELS "plain;jobs;dash")
# dash/caps-<store>: the counts a cap cuts say so: lanes_queues_capped on
#   /metrics past LN_JOB_QUEUES_MAX queues, children_total_capped of a flow
#   parent with more than LN_JOB_CHILDREN_MAX children; the stores built in
#   bulk by dash_bulk (tests/dash/dash_bulk.c).
add_executable(dash_bulk dash/dash_bulk.c)
target_link_libraries(dash_bulk PRIVATE lanes_jobs_static)
foreach(store ${LN_DASH_STORES})
  add_test(NAME dash/caps-${store}
           COMMAND /usr/bin/env -u PYTHONPATH PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3
                   ${CMAKE_CURRENT_SOURCE_DIR}/dash/test_caps.py ${store}
                   $<TARGET_FILE:lanes_cli> $<TARGET_FILE:dash_bulk>)
  set_tests_properties(dash/caps-${store} PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                       LABELS "plain;jobs;dash")
endforeach()

# The write-path service of experiment E3 (examples/writepath;
# docs/writepath.md, docs/experiments.md#e3).
#
# test_writepath_unit: traceparent parsing and formatting, and spans written
# as OTLP/JSON read back (C, forked cases).
# test_writepath_concurrency: the connection pool, and the outbox relay
# moving each row to a job once (also while request threads race it).
# test_writepath/<case>: the real programs over HTTP, driven by
# test_writepath.sh (needs curl and wrk; exits 77 = skipped without them):
#   lifecycle   start, answer, stop on SIGTERM in naive and async mode; a bad
#               --queue URL is reported cleanly
#   validation  each endpoint rejects bad input with a 4xx JSON error and
#               writes nothing, in both modes
#   load        a few seconds of wrk in each mode: no errors; the
#               consistency check passes after the queue drains
#   trace       one async request: the worker's span is in the request's
#               trace, a child of its queue.add span; waterfall and boundary
#   snapshot    refused writes (unknown user/post, duplicate like) leave
#               their pooled connection usable: later writes answer 201
#   crash       kill -9 of the async service under load, restart: after the
#               drain nothing is uncounted and no count differs (outbox)
#   crash_redis the same with the queue in Redis (LANES_TEST_REDIS_URL)
#   malformed   requests that cannot be parsed or break a limit (any
#               Transfer-Encoding or bad chunk, Content-Length over 16 KiB or
#               non-numeric, heads over 8 KiB and over 256 KiB, HTTP/2.0 and
#               1.7, a garbage request line), also as the 2nd request of a
#               keep-alive connection: the API's JSON error, then the
#               connection closes (raw sockets, python3)
#   outbox_wait a write whose outbox row is not relayed yet: the check waits
#               for the outbox as for the queue (the race of trace, #26)
#   overload    idle connections past --max-connections: the next client
#               gets a JSON 503 at once
#   slowloris   1,000 trickling connections held while normal requests
#               answer 201; trickled heads and bodies cut by
#               --request-timeout (408); an idle keep-alive connection gives
#               its place at the limit (python3)
#   redis       the async load with the queue in Redis (LANES_TEST_REDIS_URL,
#               set by scripts/with-services.sh; skipped without it)
if(NOT TARGET writepath OR NOT TARGET writepath_worker)
  return()
endif()

ln_test(NAME test_writepath_unit SOURCES writepath/test_writepath_unit.c
        LIBS writepath_core TIMEOUT 60)
ln_test(NAME test_writepath_concurrency SOURCES writepath/test_writepath_concurrency.c
        LIBS writepath_core TIMEOUT 60)

set(LN_WRITEPATH_CASES lifecycle validation load trace snapshot crash malformed overload
    outbox_wait slowloris)
if(LN_HAVE_REDIS) # the queue in Redis needs liblanes-jobs' Redis store
  list(APPEND LN_WRITEPATH_CASES redis crash_redis)
endif()
foreach(case ${LN_WRITEPATH_CASES})
  add_test(NAME test_writepath/${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/writepath/test_writepath.sh ${case}
                   $<TARGET_FILE:writepath> $<TARGET_FILE:writepath_worker>
                   ${PROJECT_SOURCE_DIR}/examples/writepath/load.lua)
  set_tests_properties(test_writepath/${case} PROPERTIES TIMEOUT 90
                       SKIP_RETURN_CODE 77 LABELS "plain;writepath")
endforeach()
# Both use the queue "writepath" on the one test Redis: never at once.
if(LN_HAVE_REDIS)
  set_tests_properties(test_writepath/redis test_writepath/crash_redis PROPERTIES
                       RESOURCE_LOCK writepath_redis_queue)
endif()

# lanes bench, end to end (tests/bench/test_bench_cli.py, python3 standard library
# only): quick runs of every experiment, the result schema of every JSON
# written, well-formed SVG, and the command line's failure modes. Registered
# for this tree only: it runs real workloads for seconds, and the sanitizer
# trees test the same code through their own unit tests.
find_package(Python3 COMPONENTS Interpreter)
if(TARGET lanes_cli AND Python3_Interpreter_FOUND)
  add_test(NAME test_bench_cli
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/bench/test_bench_cli.py
                   $<TARGET_FILE:lanes_cli>)
  # PROCESSORS 2: it runs alone under `ctest -j2`. Its experiments measure
  # throughput with every core busy; beside the other tests they ran 4x
  # slower on a loaded CI machine (past a 180 s timeout) than alone (~50 s).
  set_tests_properties(test_bench_cli PROPERTIES TIMEOUT 600 PROCESSORS 2 LABELS "plain;bench"
                       ENVIRONMENT "LANES_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()

# bench/tools/redis-instructions.sh (redis-server instructions per job,
# lanes' C worker against BullMQ's Node worker, under callgrind) end to end
# on 200 jobs: both figures come out and its bad arguments exit 2; the
# figures themselves are never asserted. Skipped (77) without valgrind,
# node or tests/interop's BullMQ. PROCESSORS 2: valgrind's server and the
# two workers take both cores for ~15 s.
find_program(LN_VALGRIND valgrind)
if(TARGET redis_floor AND LN_VALGRIND)
  add_test(NAME test_redis_instructions
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/bench/test_redis_instructions.sh ${PROJECT_SOURCE_DIR}
                   ${PROJECT_BINARY_DIR})
  set_tests_properties(test_redis_instructions PROPERTIES TIMEOUT 300 PROCESSORS 2 SKIP_RETURN_CODE 77
                       LABELS "plain;bench;redis")
endif()

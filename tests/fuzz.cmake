# Coverage-guided fuzz targets (clang's libFuzzer with ASan and UBSan) for
# the code that reads bytes from outside the process: cron patterns and
# time zones, store URLs, job ids / queue names / JSON texts, Redis's
# CLIENT LIST reply, a scheduler's hash and the jobs a worker's step took
# (their opts as any program wrote them), text to repair as UTF-8 (the
# library's and `worker --exec`'s), the flow file of `lanes jobs flow`
# (tests/fuzz/fuzz_*.c).
#
# Two roles, as the sanitizer trees of LN_SANITIZER_DIRS:
#   - a tree configured with LN_FUZZ=ON (clang; make test's build-fuzz)
#     builds the targets (`--target ln_fuzz`) with the library instrumented
#     for coverage, and registers fuzz/<target> for itself;
#   - the plain tree, given LN_FUZZ_DIR=<that tree>, registers the same
#     fuzz/<target> tests running that tree's programs, so one CTest run of
#     make test covers them. A target that was not built is skipped (77).
# Each test replays tests/fuzz/corpus/<target> (committed seeds and the
# minimized inputs of every defect found), then fuzzes LN_FUZZ_SECONDS more.
# docs/build.md: running them longer by hand; docs/internals/fuzzing.md: the
# choices and the defects found.
option(LN_FUZZ "Build the libFuzzer targets of tests/fuzz (needs clang and its fuzzer runtime)" OFF)
set(LN_FUZZ_DIR "" CACHE PATH "a tree built with LN_FUZZ=ON whose fuzz targets this tree's CTest runs")
set(LN_FUZZ_SECONDS 8 CACHE STRING "seconds each fuzz test fuzzes after replaying its seeds")
set(LN_FUZZ_TARGETS cron url json validate utf8 flow)
if(LN_HAVE_REDIS)
  list(APPEND LN_FUZZ_TARGETS clients sched step)
endif()
if(NOT TARGET PkgConfig::MHD) # cli/worker/worker_metrics.c, which worker_exec.c calls
  pkg_check_modules(MHD IMPORTED_TARGET libmicrohttpd)
endif()
if(TARGET PkgConfig::MHD)
  list(APPEND LN_FUZZ_TARGETS exec)
endif()

function(ln_fuzz_test name exe)
  set(dict "")
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.dict)
    set(dict ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${name}.dict)
  endif()
  add_test(NAME fuzz/${name}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run.sh ${exe}
                   ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name}
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/${name} ${LN_FUZZ_SECONDS}
                   ${dict})
  math(EXPR limit "${LN_FUZZ_SECONDS} * 4 + 60")
  set_tests_properties(fuzz/${name} PROPERTIES TIMEOUT ${limit} SKIP_RETURN_CODE 77
                       LABELS "fuzz")
endfunction()

if(LN_FUZZ)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  check_c_source_compiles([[
    #include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
  ]] LN_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT LN_HAVE_LIBFUZZER)
    message(STATUS "lanes: LN_FUZZ: ${CMAKE_C_COMPILER} cannot link -fsanitize=fuzzer "
                   "(needs clang and libFuzzer: Debian clang libclang-rt-14-dev): "
                   "no fuzz targets, the fuzz tests skip")
    add_custom_target(ln_fuzz) # nothing to build, so `--target ln_fuzz` still works
    foreach(t ${LN_FUZZ_TARGETS})
      ln_fuzz_test(${t} ${CMAKE_CURRENT_BINARY_DIR}/fuzz_${t})
    endforeach()
  else()
    set(ln_fuzz_san -fsanitize=address,undefined -fno-sanitize-recover=undefined)
    # The library's own objects get the coverage hooks, or the fuzzer is blind.
    foreach(t lanes_obj lanes_jobs_obj)
      target_compile_options(${t} PRIVATE -fsanitize=fuzzer-no-link ${ln_fuzz_san})
    endforeach()
    add_custom_target(ln_fuzz)
    foreach(t ${LN_FUZZ_TARGETS})
      add_executable(fuzz_${t} EXCLUDE_FROM_ALL fuzz/fuzz_${t}.c)
      target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer ${ln_fuzz_san})
      target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer ${ln_fuzz_san})
      target_include_directories(fuzz_${t} PRIVATE ${PROJECT_SOURCE_DIR}/src
                                 ${LN_JOBS_INTERNAL_INCLUDES} ${PROJECT_SOURCE_DIR}/cli/common
                                 ${PROJECT_SOURCE_DIR}/cli/jobs ${PROJECT_SOURCE_DIR}/cli/worker)
      target_link_libraries(fuzz_${t} PRIVATE lanes_jobs_static)
      if(LN_HAVE_REDIS)
        target_compile_definitions(fuzz_${t} PRIVATE LN_HAVE_REDIS=1)
      endif()
      add_dependencies(ln_fuzz fuzz_${t})
      ln_fuzz_test(${t} $<TARGET_FILE:fuzz_${t}>)
    endforeach()
    # The URL target checks the CLI's own URL handling too.
    target_sources(fuzz_url PRIVATE ${PROJECT_SOURCE_DIR}/cli/common/store_url.c
                   ${PROJECT_SOURCE_DIR}/cli/common/cli_err.c)
    target_link_libraries(fuzz_url PRIVATE PkgConfig::JANSSON)
    if(TARGET fuzz_sched) # redis/sched.c is included: its generated scripts' header
      target_include_directories(fuzz_sched PRIVATE ${PROJECT_BINARY_DIR}/src/jobs)
      target_compile_definitions(fuzz_sched PRIVATE LN_HAVE_REDIS=1)
    endif()
    # The flow file reader of `lanes jobs flow`, with the CLI code it calls.
    foreach(f jobs/jobs_flow common/cli_err common/cli_backoff common/cli_num common/cli_opts
              common/jobs_store common/store_url)
      target_sources(fuzz_flow PRIVATE ${PROJECT_SOURCE_DIR}/cli/${f}.c)
    endforeach()
    target_link_libraries(fuzz_flow PRIVATE PkgConfig::JANSSON)
    # The --exec output cleaner (cli/worker/worker_exec.c, included by fuzz_exec.c).
    if(TARGET fuzz_exec)
      foreach(f jobs/jobs_flow common/cli_err common/cli_backoff common/cli_num common/cli_opts
                common/jobs_store common/store_url worker/worker_fd3 worker/worker_log
                worker/worker_metrics worker/worker_gate)
        target_sources(fuzz_exec PRIVATE ${PROJECT_SOURCE_DIR}/cli/${f}.c)
      endforeach()
      target_link_libraries(fuzz_exec PRIVATE PkgConfig::JANSSON PkgConfig::MHD)
    endif()
  endif()
elseif(LN_FUZZ_DIR)
  foreach(t ${LN_FUZZ_TARGETS})
    ln_fuzz_test(${t} ${LN_FUZZ_DIR}/tests/fuzz_${t})
  endforeach()
endif()

# The differential check of the JSON rule against Node's JSON.parse, in the
# plain tree: the committed json corpus, the json fuzzer's finds (when the
# fuzz tree ran), and the edge cases of json_diff.mjs.
find_program(LN_NODE node)
if(NOT LN_FUZZ AND LN_NODE)
  add_executable(fuzz_json_verdict fuzz/json_verdict.c)
  target_link_libraries(fuzz_json_verdict PRIVATE lanes_jobs_static)
  set(ln_json_dirs ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/json)
  if(LN_FUZZ_DIR)
    list(APPEND ln_json_dirs ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/json/new)
  endif()
  add_test(NAME fuzz/json_diff
           COMMAND ${LN_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/json_diff.mjs
                   $<TARGET_FILE:fuzz_json_verdict> ${ln_json_dirs})
  set_tests_properties(fuzz/json_diff PROPERTIES TIMEOUT 120 LABELS "plain;fuzz")
  if(LN_FUZZ_DIR)
    set_tests_properties(fuzz/json_diff PROPERTIES DEPENDS fuzz/json) # after its finds
  endif()
endif()

# test_install: `cmake --install` into a temporary prefix, then build and
# run examples/quickstart.c against `pkg-config lanes` and a small jobs
# program (test_install_jobs.c) against `pkg-config lanes-jobs`, and check
# that liblanes.so needs no store library (tests/install/test_install.sh). Plain
# tree only: it installs this tree's build, and a sanitizer tree's
# libraries need the sanitizer's runtime in every program.
if(LN_SAN_FLAGS)
  return()
endif()
set(LN_INSTALL_TEST_JOBS 0)
if(LN_HAVE_JOBS)
  set(LN_INSTALL_TEST_JOBS 1)
endif()
add_test(NAME test_install
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/test_install.sh
                 ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_INSTALL_LIBDIR}
                 ${LN_INSTALL_TEST_JOBS} ${CMAKE_C_COMPILER})
set_tests_properties(test_install PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77
                     LABELS "plain;install")

# test_gen_man: cmake/gen-man.sh fails when a `lanes CMD --help` it reads
# fails, rather than write an empty man page (tests/install/test_gen_man.sh).
if(TARGET lanes_cli)
  add_test(NAME test_gen_man
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/test_gen_man.sh $<TARGET_FILE:lanes_cli>
                   ${PROJECT_SOURCE_DIR}/cmake/gen-man.sh)
  set_tests_properties(test_gen_man PROPERTIES TIMEOUT 60 LABELS "plain")
endif()

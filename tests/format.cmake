# format: every C file git tracks under include src tests bench cli
# examples matches .clang-format (scripts/check-format.sh; `make format`
# fixes). Skipped (77) without clang-format. Once, in this tree only.
add_test(NAME format COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/check-format.sh)
set_tests_properties(format PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                     LABELS "plain;format")

# docs_links: every relative link of README.md, docs/**/*.md and
# results/README.md names a file of the tree and, with a #fragment, a
# heading or <a id> of it (scripts/check-links.py). Skipped (77) without
# python3. Once, in this tree only.
find_program(LN_PYTHON3 python3)
if(LN_PYTHON3)
  add_test(NAME docs_links
           COMMAND ${LN_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/check-links.py ${PROJECT_SOURCE_DIR})
else()
  add_test(NAME docs_links COMMAND sh -c "echo 'skipped [python3]: python3 not found'; exit 77")
endif()
set_tests_properties(docs_links PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                     LABELS "plain;format")

# docs_snippets: every ```c block of README.md and docs/*.md compiles
# against include/ and, when it has a main(), links against the libraries of
# this tree (scripts/check-snippets.py; the `<!-- snippet: fragment -->`
# marker and what it does: docs/build.md#the-documentation-snippets).
# Skipped (77) without python3. Once, in this tree only.
if(LN_PYTHON3)
  add_test(NAME docs_snippets
           COMMAND ${LN_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/check-snippets.py
                   ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
else()
  add_test(NAME docs_snippets COMMAND sh -c "echo 'skipped [python3]: python3 not found'; exit 77")
endif()
set_tests_properties(docs_snippets PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77
                     LABELS "plain;format")

# demo: `make demo` (scripts/demo.sh) on the committed results/, without
# rerunning the benchmarks: a job, a flow, the dashboard started and
# stopped, one figure and one reading line per experiment, under 80 lines
# (tests/install/test_demo.sh). Needs the lanes command (LN_WITH_JOBS). Skipped
# (77) without curl or python3. Once, in this tree only.
if(LN_HAVE_JOBS)
  add_test(NAME demo COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/test_demo.sh ${PROJECT_SOURCE_DIR}
                             ${PROJECT_BINARY_DIR})
  set_tests_properties(demo PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77 LABELS "plain;format")
endif()

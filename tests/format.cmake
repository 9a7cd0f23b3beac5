# format: every C file git tracks under include src tests bench cli
# examples matches .clang-format (scripts/check-format.sh; `make format`
# fixes). Skipped (77) without clang-format. Once, in this tree only.
add_test(NAME format COMMAND sh ${PROJECT_SOURCE_DIR}/scripts/check-format.sh)
set_tests_properties(format PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77
                     LABELS "plain;format")

# Audit of BullMQ compatibility under mixed load: stock bullmq@6.7.0 Node
# Workers, schedulers, flows, stalled checks and Bull Board's queries on the
# same queues as C workers (`lanes worker`) at the same time.
# tests/interop/test_audit_<topic>.sh drives tests/interop/audit_<topic>.mjs.
# A case that reproduces a bug not fixed yet exits 42 and is registered
# WILL_FAIL (its message says which bug); a fix makes it fail: then drop it
# from LN_AUDIT_KNOWN_BUGS.
# Skipped (77) without LANES_TEST_REDIS_URL, node or the lanes CLI.
if(NOT LN_HAVE_REDIS OR NOT TARGET lanes_cli)
  return()
endif()

# LN_AUDIT_KNOWN_BUGS: cases that reproduce a reported bug not fixed yet;
# they pass while the scenario exits 42 (the known bug) and fail on any other
# outcome, success included (the bug is fixed: move the case up).
set(LN_AUDIT_CASES sched flow stall board dedup schedlife children cstall pause longid gconc freeze)
set(LN_AUDIT_KNOWN_BUGS)
foreach(case ${LN_AUDIT_CASES} ${LN_AUDIT_KNOWN_BUGS})
  set(expect "")
  if(case IN_LIST LN_AUDIT_KNOWN_BUGS)
    set(expect known-bug)
  endif()
  add_test(NAME audit/${case}
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/interop/test_audit_${case}.sh
                   $<TARGET_FILE:lanes_cli> ${expect})
  set_tests_properties(audit/${case} PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77
                       LABELS "plain;redis")
endforeach()

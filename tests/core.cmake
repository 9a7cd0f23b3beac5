# Core: errors and version, queues, histogram, pool/lanes/tasks/groups,
# completions, allocator failures, a randomized stress test, E4 starvation.
ln_test(NAME test_errors SOURCES core/test_errors.c)
ln_test(NAME test_queue SOURCES core/test_queue.c)
ln_test(NAME test_pool SOURCES core/test_pool.c)
ln_test(NAME test_mpmc SOURCES core/test_mpmc.c)
ln_test(NAME test_alloc_fail SOURCES core/test_alloc_fail.c)
ln_test(NAME test_stress SOURCES core/test_stress.c TIMEOUT 300)
if(OPENSSL_FOUND)
  ln_test(NAME test_starvation SOURCES core/test_starvation.c LIBS PkgConfig::OPENSSL)
endif()
ln_test(NAME test_pool_adversarial SOURCES core/test_pool_adversarial.c TIMEOUT 120)
ln_test(NAME test_pool_destroy_races SOURCES core/test_pool_destroy_races.c TIMEOUT 120)
ln_test(NAME test_pool_grow SOURCES core/test_pool_grow.c TIMEOUT 120)
# The same ring and wake-up tests with the symmetric barrier (seq_cst fences
# on both sides), the fallback where membarrier(2) is unavailable; the plain
# run above uses membarrier, the TSan run a shared-word RMW (barrier.h).
add_test(NAME test_mpmc_fences COMMAND test_mpmc)
set_tests_properties(test_mpmc_fences PROPERTIES TIMEOUT 120 LABELS plain SKIP_RETURN_CODE 77
                     ENVIRONMENT "LANES_NO_MEMBARRIER=1")
# Nested fork-join: waits inside tasks help, groups cover children added
# during the wait, the helping depth bound (docs/internals/forkjoin.md).
ln_test(NAME test_forkjoin SOURCES core/test_forkjoin.c TIMEOUT 300)

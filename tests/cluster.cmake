# Redis Cluster (docs/redis.md "Redis Cluster"): lanes' own routing over
# hiredis on a local cluster of 3 masters and 3 replicas, which
# scripts/with-services.sh starts (LANES_TEST_REDIS_CLUSTER_URL); the tests
# skip (77) where redis-server has no cluster support.
#
# conformance/cluster     the whole conformance suite on the cluster, with
#                         a hash-tag prefix ({lconf<run>})
# test_cluster/<case>     tests/redis/test_cluster.sh: the hash-tag rule, BullMQ
#                         (ioredis Cluster) both ways, a manual failover
#                         and a killed master mid-run (with an 8 s and a
#                         3 s lease), a slot moved (MOVED) and half-moved
#                         (ASK). Every case is RUN_SERIAL: the failovers
#                         change the shared cluster's roles (a killed
#                         master is restarted and rejoins as a replica)

ln_conformance(cluster LABELS redis cluster) # tests/jobs.cmake

set(LN_CLUSTER_CLI "")
if(TARGET lanes_cli)
  # Cases drive the `lanes` CLI: plain tree only (forks, failovers).
  foreach(case tag node_to_c c_to_node failover kill kill_short_lease wait_replicas moved ask)
    add_test(NAME test_cluster/${case}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/redis/test_cluster.sh ${case}
                     $<TARGET_FILE:redis_peer> $<TARGET_FILE:lanes_cli>)
    set_tests_properties(test_cluster/${case} PROPERTIES TIMEOUT 120
                         SKIP_RETURN_CODE 77 LABELS "plain;redis;cluster"
                         RUN_SERIAL TRUE)
  endforeach()
endif()

ln_test(NAME test_pool_adversarial SOURCES test_pool_adversarial.c TIMEOUT 120)

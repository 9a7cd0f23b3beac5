# Rolling concurrency: ln_limiter, ln_map, and the libuv adapter.
ln_test(NAME test_limiter SOURCES core/test_limiter.c)
ln_test(NAME test_map SOURCES core/test_map.c)
if(LIBUV_FOUND AND OPENSSL_FOUND)
  ln_test(NAME test_uv SOURCES core/test_uv.c LIBS PkgConfig::LIBUV PkgConfig::OPENSSL)
endif()

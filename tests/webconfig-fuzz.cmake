# The web-config parser under fuzzing (tests/fuzz/fuzz-webconfig.c), like identity.cmake's:
# fuzz-replay-webconfig replays tests/fuzz/corpus/webconfig/ with any compiler (label
# fuzz-replay); fuzz-live-webconfig runs libFuzzer for JOULESTAT_FUZZ_SECONDS with clang
# (label fuzz). This file sorts after identity.cmake, which finds out whether libFuzzer works.
set(_webfuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)

add_executable(fuzz-replay-webconfig ${_webfuzz_dir}/fuzz-webconfig.c ${_webfuzz_dir}/fuzz-main.c)
target_include_directories(fuzz-replay-webconfig PRIVATE ${_webfuzz_dir})
target_link_libraries(fuzz-replay-webconfig PRIVATE js_http js_base)
joulestat_warnings(fuzz-replay-webconfig)
add_test(NAME fuzz-replay-webconfig
         COMMAND fuzz-replay-webconfig ${_webfuzz_dir}/corpus/webconfig)
set_tests_properties(fuzz-replay-webconfig PROPERTIES LABELS fuzz-replay TIMEOUT 120)

if(JOULESTAT_HAVE_LIBFUZZER)
  set(_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  # The parser's sources are compiled into the target so libFuzzer sees their coverage.
  add_executable(fuzz-webconfig ${_webfuzz_dir}/fuzz-webconfig.c
                 ${CMAKE_SOURCE_DIR}/src/http/webconfig.c ${CMAKE_SOURCE_DIR}/src/http/webconfig_tls.c
                 ${CMAKE_SOURCE_DIR}/src/http/web_auth.c ${CMAKE_SOURCE_DIR}/src/http/web_rate.c
                 ${CMAKE_SOURCE_DIR}/src/http/webconfig_client.c
                 ${CMAKE_SOURCE_DIR}/src/http/tls_check.c ${CMAKE_SOURCE_DIR}/src/http/tls_init.c)
  target_include_directories(fuzz-webconfig PRIVATE ${_webfuzz_dir} ${CMAKE_SOURCE_DIR}/src/http)
  # src/http's imported targets are not visible here: found again.
  pkg_check_modules(WEBFUZZ REQUIRED IMPORTED_TARGET yaml-0.1 libxcrypt gnutls)
  target_link_libraries(fuzz-webconfig PRIVATE js_base PkgConfig::WEBFUZZ ${CMAKE_DL_LIBS})
  target_compile_options(fuzz-webconfig PRIVATE ${_fuzz_flags})
  target_link_options(fuzz-webconfig PRIVATE ${_fuzz_flags})
  joulestat_warnings(fuzz-webconfig)
  set(_work ${CMAKE_BINARY_DIR}/fuzz-work/webconfig)
  file(MAKE_DIRECTORY ${_work})
  add_test(NAME fuzz-live-webconfig
           COMMAND fuzz-webconfig -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 ${_work}
                   ${_webfuzz_dir}/corpus/webconfig)
  math(EXPR _fuzz_timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz-live-webconfig PROPERTIES LABELS fuzz TIMEOUT ${_fuzz_timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

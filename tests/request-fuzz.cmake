# The HTTP server on raw request bytes (tests/fuzz/fuzz-http-request.c), like
# webconfig-fuzz.cmake's: fuzz-replay-http-request replays tests/fuzz/corpus/http-request/
# with any compiler (label fuzz-replay, a few seconds); fuzz-live-http-request runs libFuzzer
# for JOULESTAT_FUZZ_SECONDS with clang (label fuzz). Sorts after identity.cmake (libFuzzer
# found or not) and http.cmake (the sample snapshot).
set(_reqfuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(_reqfuzz_src ${_reqfuzz_dir}/fuzz-http-request.c ${CMAKE_SOURCE_DIR}/tests/http/httpclient.c)

add_executable(fuzz-replay-http-request ${_reqfuzz_src} ${_reqfuzz_dir}/fuzz-main.c)
target_include_directories(fuzz-replay-http-request PRIVATE ${_reqfuzz_dir})
target_link_libraries(fuzz-replay-http-request PRIVATE js_http_testdata js_http js_base)
joulestat_warnings(fuzz-replay-http-request)
add_test(NAME fuzz-replay-http-request
         COMMAND fuzz-replay-http-request ${_reqfuzz_dir}/corpus/http-request)
set_tests_properties(fuzz-replay-http-request PROPERTIES LABELS fuzz-replay TIMEOUT 120)

if(JOULESTAT_HAVE_LIBFUZZER)
  set(_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  # The server's sources are compiled into the target so libFuzzer sees their coverage
  # (its worker threads' too: the counters are global).
  file(GLOB _reqfuzz_http CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/http/*.c)
  add_executable(fuzz-http-request ${_reqfuzz_src} ${_reqfuzz_http}
                 ${CMAKE_SOURCE_DIR}/tests/http/sample-snapshot.c)
  target_include_directories(fuzz-http-request PRIVATE ${_reqfuzz_dir} ${CMAKE_SOURCE_DIR}/tests
                             ${CMAKE_SOURCE_DIR}/src/http)
  # src/http's imported targets are not visible here: found again.
  pkg_check_modules(REQFUZZ REQUIRED IMPORTED_TARGET libmicrohttpd yaml-0.1 libxcrypt libisal
                    gnutls)
  target_link_libraries(fuzz-http-request PRIVATE js_store js_base PkgConfig::REQFUZZ
                        Threads::Threads ${CMAKE_DL_LIBS})
  # libFuzzer waits less for an answer than the replay (1 s, still room on a busy machine).
  target_compile_definitions(fuzz-http-request PRIVATE FIRST_BYTE_MS=1000)
  target_compile_options(fuzz-http-request PRIVATE ${_fuzz_flags})
  target_link_options(fuzz-http-request PRIVATE ${_fuzz_flags})
  joulestat_warnings(fuzz-http-request)
  set(_work ${CMAKE_BINARY_DIR}/fuzz-work/http-request)
  file(MAKE_DIRECTORY ${_work})
  add_test(NAME fuzz-live-http-request
           COMMAND fuzz-http-request -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1
                   -dict=${_reqfuzz_dir}/http-request.dict ${_work}
                   ${_reqfuzz_dir}/corpus/http-request)
  math(EXPR _fuzz_timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz-live-http-request PROPERTIES LABELS fuzz TIMEOUT ${_fuzz_timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# The HTTP server on raw request bytes (tests/fuzz/fuzz-http-request.c):
# fuzz-replay-http-request and fuzz-live-http-request (cmake/FuzzTests.cmake). Sorts after
# http.cmake (the sample snapshot).
set(_reqfuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(_reqfuzz_src ${_reqfuzz_dir}/fuzz-http-request.c ${CMAKE_SOURCE_DIR}/tests/http/httpclient.c)

joulestat_fuzz_replay(http-request SOURCES ${_reqfuzz_src} LIBS js_http_testdata js_http js_base)

if(JOULESTAT_HAVE_LIBFUZZER)
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
  joulestat_fuzz_live(http-request TARGET fuzz-http-request MAX_LEN 16384
                      DICT ${_reqfuzz_dir}/http-request.dict)
endif()

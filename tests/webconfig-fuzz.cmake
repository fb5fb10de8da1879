# The web-config parser under fuzzing (tests/fuzz/fuzz-webconfig.c): fuzz-replay-webconfig
# and fuzz-live-webconfig (cmake/FuzzTests.cmake).
set(_webfuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)

joulestat_fuzz_replay(webconfig SOURCES ${_webfuzz_dir}/fuzz-webconfig.c LIBS js_http js_base)

if(JOULESTAT_HAVE_LIBFUZZER)
  # The parser's sources are compiled into the target so libFuzzer sees their coverage.
  add_executable(fuzz-webconfig ${_webfuzz_dir}/fuzz-webconfig.c
                 ${CMAKE_SOURCE_DIR}/src/http/webconfig.c ${CMAKE_SOURCE_DIR}/src/http/webconfig_tls.c
                 ${CMAKE_SOURCE_DIR}/src/http/web_auth.c ${CMAKE_SOURCE_DIR}/src/http/web_rate.c
                 ${CMAKE_SOURCE_DIR}/src/http/webconfig_client.c
                 ${CMAKE_SOURCE_DIR}/src/http/yaml_loader.c ${CMAKE_SOURCE_DIR}/src/http/crypt_loader.c
                 ${CMAKE_SOURCE_DIR}/src/http/tls_check.c ${CMAKE_SOURCE_DIR}/src/http/tls_init.c)
  target_include_directories(fuzz-webconfig PRIVATE ${_webfuzz_dir} ${CMAKE_SOURCE_DIR}/src/http)
  # src/http's imported targets are not visible here: found again.
  pkg_check_modules(WEBFUZZ REQUIRED IMPORTED_TARGET yaml-0.1 libxcrypt gnutls)
  target_link_libraries(fuzz-webconfig PRIVATE js_base PkgConfig::WEBFUZZ ${CMAKE_DL_LIBS})
  joulestat_fuzz_live(webconfig TARGET fuzz-webconfig MAX_LEN 4096)
endif()

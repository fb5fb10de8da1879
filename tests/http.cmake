# HTTP exporter tests: exposition golden files, promtool, web config, the live server.
set(_http_dir ${CMAKE_CURRENT_SOURCE_DIR}/http)

# The hand-built snapshot shared by the exposition tests and the promtool writer.
add_library(js_http_testdata STATIC ${_http_dir}/sample-snapshot.c)
target_include_directories(js_http_testdata PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(js_http_testdata PUBLIC js_store)
joulestat_warnings(js_http_testdata)
target_link_libraries(test-exposition PRIVATE js_http_testdata)

# promtool check metrics on the rendered exposition (both prefixes), no warnings allowed.
add_executable(http-write-exposition ${_http_dir}/write-exposition.c)
target_link_libraries(http-write-exposition PRIVATE js_http_testdata js_http)
joulestat_warnings(http-write-exposition)
add_test(NAME http-promtool
         COMMAND ${_http_dir}/promtool-check.sh $<TARGET_FILE:http-write-exposition>)
set_tests_properties(http-promtool PROPERTIES LABELS fixture TIMEOUT 120)

# The live server, in-process: routes, gzip, health, slow clients, auth, listen forms.
add_executable(test-http-server ${_http_dir}/test-http-server.c ${_http_dir}/httpclient.c)
# zlib inflates the gzip replies, as scrapers do (the daemon compresses with ISA-L).
find_package(ZLIB REQUIRED)
target_link_libraries(test-http-server PRIVATE js_http_testdata js_testutil js_http ZLIB::ZLIB)
target_link_libraries(test-gzip PRIVATE ZLIB::ZLIB)
# Allocations failing on demand in test-gzip (its __wrap_malloc and __wrap_reallocarray).
target_link_options(test-gzip PRIVATE -Wl,--wrap=malloc,--wrap=reallocarray)
joulestat_warnings(test-http-server)
add_test(NAME test-http-server COMMAND test-http-server)
set_tests_properties(test-http-server PROPERTIES LABELS unit TIMEOUT 120)

# TLS and basic auth with real clients (openssl-made certificate, curl).
add_executable(http-serve-sample ${_http_dir}/serve-sample.c)
target_link_libraries(http-serve-sample PRIVATE js_http_testdata js_http)
joulestat_warnings(http-serve-sample)
add_executable(http-bcrypt-hash ${_http_dir}/bcrypt-hash.c)
target_link_libraries(http-bcrypt-hash PRIVATE js_http)
joulestat_warnings(http-bcrypt-hash)
add_test(NAME http-tls-auth
         COMMAND ${_http_dir}/tls-auth-check.sh $<TARGET_FILE:http-serve-sample>
                 $<TARGET_FILE:http-bcrypt-hash>)
set_tests_properties(http-tls-auth PROPERTIES LABELS fixture TIMEOUT 120)

# tls_init(): forwarding to "the library" (a fake gnutls_global_init() in a shared library
# linked after the executable) and its failure; and a process with no GnuTLS at all.
add_library(js_fake_gnutls SHARED ${CMAKE_CURRENT_SOURCE_DIR}/fakes/fake_gnutls.c)
target_include_directories(js_fake_gnutls PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/fakes)
add_executable(test-tls-init ${_http_dir}/test-tls-init.c ${CMAKE_SOURCE_DIR}/src/http/tls_init.c)
target_compile_definitions(test-tls-init PRIVATE JOULESTAT_FAKE_GNUTLS)
target_include_directories(test-tls-init PRIVATE ${CMAKE_SOURCE_DIR}/src/http)
target_link_libraries(test-tls-init PRIVATE js_testutil js_fake_gnutls ${CMAKE_DL_LIBS})
add_executable(test-tls-init-none ${_http_dir}/test-tls-init.c
                                  ${CMAKE_SOURCE_DIR}/src/http/tls_init.c)
target_include_directories(test-tls-init-none PRIVATE ${CMAKE_SOURCE_DIR}/src/http)
target_link_libraries(test-tls-init-none PRIVATE js_testutil ${CMAKE_DL_LIBS})
foreach(t test-tls-init test-tls-init-none)
  joulestat_warnings(${t})
  add_test(NAME ${t} COMMAND ${t})
  set_tests_properties(${t} PROPERTIES LABELS unit TIMEOUT 60)
endforeach()

# Scrape latency at ~10 000 series. The targets (perf-anchors: p99 < 10 ms plain, < 15 ms
# gzip) hold on a quiet machine only; CTest checks 10x that as a regression guard, and the
# label keeps it out of sanitizer runs. Run `http-scrape-bench 300 10 15` by hand.
add_executable(http-scrape-bench ${_http_dir}/scrape-bench.c ${_http_dir}/httpclient.c)
target_include_directories(http-scrape-bench PRIVATE ${_http_dir})
target_link_libraries(http-scrape-bench PRIVATE js_http)
joulestat_warnings(http-scrape-bench)
add_test(NAME http-scrape-bench COMMAND http-scrape-bench 200 100 150)
set_tests_properties(http-scrape-bench PROPERTIES LABELS slow TIMEOUT 300)

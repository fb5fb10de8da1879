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

# RAPL and CPU-energy tests (area 4): a fixture library for the test-rapl-* / test-cpu-*
# unit tests, and script tests.
add_library(js_rapl_fixture STATIC ${CMAKE_CURRENT_LIST_DIR}/rapl/fixture.c)
target_include_directories(js_rapl_fixture PUBLIC ${CMAKE_CURRENT_LIST_DIR}/rapl)
target_link_libraries(js_rapl_fixture PUBLIC js_testutil js_cpu)
joulestat_warnings(js_rapl_fixture)

file(GLOB _rapl_unit_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/unit/test-rapl*.c
     ${CMAKE_CURRENT_LIST_DIR}/unit/test-cpu*.c)
foreach(src IN LISTS _rapl_unit_tests)
  get_filename_component(name ${src} NAME_WE)
  target_link_libraries(${name} PRIVATE js_rapl_fixture)
endforeach()

# rapl-probe: prints what the RAPL source chooses and reads (script tests, real nodes).
add_executable(rapl-probe ${CMAKE_CURRENT_LIST_DIR}/rapl/rapl-probe.c)
target_link_libraries(rapl-probe PRIVATE js_cpu)
joulestat_warnings(rapl-probe)

add_test(NAME rapl-permission
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/rapl/permission.sh $<TARGET_FILE:rapl-probe>
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(rapl-permission PROPERTIES LABELS fixture SKIP_RETURN_CODE 77 TIMEOUT 60)

# Side by side with node_exporter's rapl collector (skips without prometheus-node-exporter).
add_test(NAME rapl-compare-node-exporter
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/rapl/compare-node-exporter.sh ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:rapl-probe> $<TARGET_FILE:joulestat>)
set_tests_properties(rapl-compare-node-exporter PROPERTIES LABELS e2e SKIP_RETURN_CODE 77
                     TIMEOUT 120)

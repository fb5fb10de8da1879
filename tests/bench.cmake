# Benchmarks (bench/): the keep-alive scrape client, and a smoke run of bench/run --quick
# that checks the harness produces numbers (not the budget; `make bench` measures that).
add_executable(bench-scrape ${CMAKE_SOURCE_DIR}/bench/scrape.c)
target_link_libraries(bench-scrape PRIVATE js_base)
joulestat_warnings(bench-scrape)

add_test(NAME bench-smoke
         COMMAND ${CMAKE_SOURCE_DIR}/bench/run --quick --build ${CMAKE_BINARY_DIR}
                 --out ${CMAKE_CURRENT_BINARY_DIR}/bench-smoke.md)
set_tests_properties(bench-smoke PROPERTIES LABELS "bench;slow" TIMEOUT 300)

# Per-process cost of three ways to read <pid>/stat (sizes the process scan).
add_executable(bench-procfs-syscalls ${CMAKE_SOURCE_DIR}/bench/procfs-syscalls.c)
target_link_libraries(bench-procfs-syscalls PRIVATE js_base)
joulestat_warnings(bench-procfs-syscalls)

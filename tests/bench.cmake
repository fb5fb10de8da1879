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

# One read of the eBPF task iterator on this machine's tasks, hot and cold.
add_executable(bench-task-iter-cost ${CMAKE_SOURCE_DIR}/bench/task-iter-cost.c)
target_link_libraries(bench-task-iter-cost PRIVATE js_proc)
joulestat_warnings(bench-task-iter-cost)

# Real processes for bench/run --real (sleeping, busy and threaded ones, in cgroups).
find_package(Threads REQUIRED)
add_executable(bench-spawn-procs ${CMAKE_SOURCE_DIR}/bench/spawn-procs.c)
target_link_libraries(bench-spawn-procs PRIVATE Threads::Threads)
joulestat_warnings(bench-spawn-procs)

# The tools' refusals: usage (exit 2), nothing listening (exit 1), no pid directories (exit 1).
add_test(NAME bench-scrape-usage COMMAND bench-scrape 19400 /metrics 0)
add_test(NAME bench-scrape-refused COMMAND bench-scrape 1 /metrics 1)
add_test(NAME bench-procfs-syscalls-empty COMMAND bench-procfs-syscalls ${CMAKE_CURRENT_SOURCE_DIR}/trees)
add_test(NAME bench-task-iter-cost-usage COMMAND bench-task-iter-cost 0)
set_tests_properties(bench-scrape-usage bench-scrape-refused bench-procfs-syscalls-empty
                     bench-task-iter-cost-usage PROPERTIES LABELS bench)
set_tests_properties(bench-scrape-usage PROPERTIES PASS_REGULAR_EXPRESSION "^usage: bench-scrape")
set_tests_properties(bench-scrape-refused PROPERTIES PASS_REGULAR_EXPRESSION
                     "^bench-scrape: connect: Connection refused")
set_tests_properties(bench-procfs-syscalls-empty PROPERTIES PASS_REGULAR_EXPRESSION
                     "no pid directories under")
set_tests_properties(bench-task-iter-cost-usage PROPERTIES PASS_REGULAR_EXPRESSION
                     "^usage: bench-task-iter-cost")

# End-to-end test of CPU energy attribution: the real binary on a fake procfs + powercap node.
add_test(NAME cpu-attribution
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/cpu-attribution.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(cpu-attribution PROPERTIES LABELS e2e TIMEOUT 120)

# Per-process CPU energy and the unseen part of workloads (cgroup cpu.stat), exact per step.
add_test(NAME cpu-process-attribution
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/cpu-process-attribution.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(cpu-process-attribution PROPERTIES LABELS e2e TIMEOUT 120)

# --procfs-keep-fds end to end (area: the bench's in-place procfs).
add_test(NAME procfs-keep-fds
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/procfs-keep-fds.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(procfs-keep-fds PROPERTIES LABELS e2e TIMEOUT 120)

# The golden expositions (tests/golden/replay/, written by scripts/update-golden): every
# shipped scenario replayed on the virtual clock must render byte for byte as stored.
add_test(NAME golden-exposition
         COMMAND ${CMAKE_SOURCE_DIR}/scripts/update-golden --check ${CMAKE_BINARY_DIR})
set_tests_properties(golden-exposition PROPERTIES LABELS e2e TIMEOUT 300)

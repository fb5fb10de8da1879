# scripts/gpu-report, the real-GPU validation's scoring, on the validation protocol played
# by the simulated node (tests/gpu/validation-protocol.scn; docs/VALIDATION.md).
add_test(NAME gpu-report
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu-report.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(gpu-report PROPERTIES LABELS e2e TIMEOUT 300)

# Simulated GPU node tests (area: sim/). Each tests/unit/test-sim*.c dlopen()s the built
# libnvidia-ml.so.1, named by JOULESTAT_SIM_LIBRARY, exactly as joulestat would load it.
if(TARGET joulestat_sim_nvml)
  find_program(JOULESTAT_VALGRIND valgrind)
  file(GLOB _sim_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test-sim*.c)
  foreach(src IN LISTS _sim_tests)
    get_filename_component(name ${src} NAME_WE)
    add_dependencies(${name} joulestat_sim_nvml)
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/sim ${CMAKE_SOURCE_DIR}/src/gpu)
    set(_sim_env "JOULESTAT_SIM_LIBRARY=$<TARGET_FILE:joulestat_sim_nvml>")
    if(JOULESTAT_SANITIZE)
      # the CPU-cost bound of test-sim-cost is for optimised builds
      list(APPEND _sim_env "JOULESTAT_SIM_COST_FACTOR=20")
    endif()
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${_sim_env})
    set_property(TEST ${name} APPEND PROPERTY LABELS sim)

    # The same under valgrind (not with sanitizers, which cannot share a process with it).
    if(JOULESTAT_VALGRIND AND NOT JOULESTAT_SANITIZE AND NOT name STREQUAL "test-sim-cost")
      add_test(NAME ${name}-valgrind
               COMMAND ${JOULESTAT_VALGRIND} -q --leak-check=full --error-exitcode=99
                       --errors-for-leak-kinds=definite,indirect,possible $<TARGET_FILE:${name}>)
      set_tests_properties(${name}-valgrind PROPERTIES LABELS "sim;valgrind" TIMEOUT 600
        ENVIRONMENT "JOULESTAT_SOURCE_DIR=${CMAKE_SOURCE_DIR};JOULESTAT_BINARY_DIR=${CMAKE_BINARY_DIR};JOULESTAT_SIM_LIBRARY=$<TARGET_FILE:joulestat_sim_nvml>")
    endif()
  endforeach()
endif()

# The accuracy tools beside the simulator: scripts/gen-mixes and scripts/accuracy-score.
add_test(NAME accuracy-tools
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/accuracy-tools.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(accuracy-tools PROPERTIES LABELS e2e TIMEOUT 300)

# A part of `make accuracy` with its thresholds (docs/ACCURACY.md).
add_test(NAME accuracy-gate
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/accuracy-gate.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(accuracy-gate PROPERTIES LABELS e2e TIMEOUT 300)

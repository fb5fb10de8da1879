# Simulated GPU node tests (area: sim/). Each tests/unit/test-sim*.c dlopen()s the built
# libnvidia-ml.so.1, named by JOULESTAT_SIM_LIBRARY, exactly as joulestat would load it.
if(TARGET joulestat_sim_nvml)
  file(GLOB _sim_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test-sim*.c)
  foreach(src IN LISTS _sim_tests)
    get_filename_component(name ${src} NAME_WE)
    add_dependencies(${name} joulestat_sim_nvml)
    target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/sim ${CMAKE_SOURCE_DIR}/src/sources)
    set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT
                 "JOULESTAT_SIM_LIBRARY=$<TARGET_FILE:joulestat_sim_nvml>")
    set_property(TEST ${name} APPEND PROPERTY LABELS sim)
  endforeach()
endif()

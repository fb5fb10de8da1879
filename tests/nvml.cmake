# NVML source tests: fake libnvidia-ml variants (tests/fakes) loaded by tests/unit/test-nvml*.c.
set(_fake_nvml_dir ${CMAKE_BINARY_DIR}/tests/fakes)
set(_fake_nvml_targets "")

function(joulestat_fake_nvml variant)
  set(name fake_nvml_${variant})
  add_library(${name} SHARED ${CMAKE_SOURCE_DIR}/tests/fakes/fake_nvml.c)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src/gpu
                             ${CMAKE_SOURCE_DIR}/tests/fakes)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${_fake_nvml_dir}
                        C_VISIBILITY_PRESET hidden)
  joulestat_warnings(${name})
endfunction()

joulestat_fake_nvml(full)
joulestat_fake_nvml(minimal FAKE_NVML_MINIMAL)
joulestat_fake_nvml(no_count FAKE_NVML_NO_COUNT)
joulestat_fake_nvml(v3only FAKE_NVML_V3_ONLY)

file(GLOB _nvml_tests CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/unit/test-nvml*.c)
foreach(src IN LISTS _nvml_tests)
  get_filename_component(t ${src} NAME_WE)
  add_dependencies(${t} fake_nvml_full fake_nvml_minimal fake_nvml_no_count fake_nvml_v3only)
  target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/tests/fakes)
  set_property(TEST ${t} APPEND PROPERTY LABELS nvml)
endforeach()

# Against the simulated GPU node, once sim/ builds it.
if(TARGET joulestat_sim_nvml)
  add_executable(test-nvml-sim ${CMAKE_SOURCE_DIR}/tests/nvml/test-nvml-sim.c)
  target_include_directories(test-nvml-sim PRIVATE ${CMAKE_SOURCE_DIR}/sim)
  target_link_libraries(test-nvml-sim PRIVATE js_testutil js_gpu)
  add_dependencies(test-nvml-sim joulestat_sim_nvml)
  joulestat_warnings(test-nvml-sim)
  add_test(NAME test-nvml-sim COMMAND test-nvml-sim)
  set_tests_properties(test-nvml-sim PROPERTIES LABELS "nvml;sim" TIMEOUT 120
                       ENVIRONMENT "JOULESTAT_SOURCE_DIR=${CMAKE_SOURCE_DIR};JOULESTAT_BINARY_DIR=${CMAKE_BINARY_DIR}")
endif()

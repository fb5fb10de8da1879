# kubelet pod-resources (area 10).
#
# podres-encode: encodes tests/kube/podresources/fixtures/*.json with the real protobuf
#   encoder (grpc_tools + python3-protobuf, /usr/bin/python3) into <build>/tests/podres-pb/,
#   a CTest fixture for test-pod-resources.
# fuzz-replay-pod-resources / fuzz-live-pod-resources: the decoder under libFuzzer
#   (cmake/FuzzTests.cmake).
set(_podres_dir ${CMAKE_SOURCE_DIR}/tests/kube/podresources)
file(GLOB _podres_fixtures CONFIGURE_DEPENDS ${_podres_dir}/fixtures/*.json)

add_test(NAME podres-encode
         COMMAND /usr/bin/python3 ${_podres_dir}/encode.py ${CMAKE_BINARY_DIR}/tests/podres-pb
                 ${_podres_fixtures})
set_tests_properties(podres-encode PROPERTIES FIXTURES_SETUP podres-pb LABELS unit TIMEOUT 120)
set_tests_properties(test-pod-resources PROPERTIES FIXTURES_REQUIRED podres-pb)

set(_podres_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(_podres_parse_dir ${CMAKE_SOURCE_DIR}/src/kube)
joulestat_fuzz_replay(pod-resources SOURCES ${_podres_fuzz_dir}/fuzz-pod-resources.c
                      LIBS js_kube js_base)

if(JOULESTAT_HAVE_LIBFUZZER)
  # The decoder and the generated protobuf-c code are compiled in, for their coverage.
  add_executable(fuzz-pod-resources ${_podres_fuzz_dir}/fuzz-pod-resources.c
                 ${_podres_parse_dir}/pod_resources_decode.c ${_podres_parse_dir}/pod_resources_gpu.c
                 ${JOULESTAT_PODRES_PB}.c)
  set_source_files_properties(${JOULESTAT_PODRES_PB}.c TARGET_DIRECTORY fuzz-pod-resources
                              PROPERTIES GENERATED TRUE COMPILE_OPTIONS -w)
  add_dependencies(fuzz-pod-resources js_kube)
  target_include_directories(fuzz-pod-resources PRIVATE ${_podres_fuzz_dir} ${_podres_parse_dir}
                             ${CMAKE_BINARY_DIR}/src/kube)
  target_link_libraries(fuzz-pod-resources PRIVATE js_base PkgConfig::PROTOBUF_C)
  joulestat_fuzz_live(pod-resources TARGET fuzz-pod-resources MAX_LEN 65536)
endif()

# End to end: joulestat serve + the grpcio pod-resources peer + the simulated GPU node.
add_test(NAME podres-e2e
         COMMAND ${_podres_dir}/podres-e2e.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(podres-e2e PROPERTIES LABELS e2e TIMEOUT 180)

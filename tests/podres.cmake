# kubelet pod-resources (area 10).
#
# podres-encode: encodes tests/kube/podresources/fixtures/*.json with the real protobuf
#   encoder (grpc_tools + python3-protobuf, /usr/bin/python3) into <build>/tests/podres-pb/,
#   a CTest fixture for test-pod-resources.
# fuzz-replay-pod-resources / fuzz-live-pod-resources: the decoder under libFuzzer, like
#   the identity targets (tests/identity.cmake).
set(_podres_dir ${CMAKE_SOURCE_DIR}/tests/kube/podresources)
file(GLOB _podres_fixtures CONFIGURE_DEPENDS ${_podres_dir}/fixtures/*.json)

add_test(NAME podres-encode
         COMMAND /usr/bin/python3 ${_podres_dir}/encode.py ${CMAKE_BINARY_DIR}/tests/podres-pb
                 ${_podres_fixtures})
set_tests_properties(podres-encode PROPERTIES FIXTURES_SETUP podres-pb LABELS unit TIMEOUT 120)
set_tests_properties(test-pod-resources PROPERTIES FIXTURES_REQUIRED podres-pb)

set(_podres_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(_podres_parse_dir ${CMAKE_SOURCE_DIR}/src/kube)
add_executable(fuzz-replay-pod-resources ${_podres_fuzz_dir}/fuzz-pod-resources.c
               ${_podres_fuzz_dir}/fuzz-main.c)
target_include_directories(fuzz-replay-pod-resources PRIVATE ${_podres_fuzz_dir})
target_link_libraries(fuzz-replay-pod-resources PRIVATE js_kube js_base)
joulestat_warnings(fuzz-replay-pod-resources)
add_test(NAME fuzz-replay-pod-resources
         COMMAND fuzz-replay-pod-resources ${_podres_fuzz_dir}/corpus/pod-resources)
set_tests_properties(fuzz-replay-pod-resources PROPERTIES LABELS fuzz-replay TIMEOUT 120)

# JOULESTAT_HAVE_LIBFUZZER is probed by tests/identity.cmake; probe again if that file
# is not (yet) included before this one.
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND NOT DEFINED JOULESTAT_HAVE_LIBFUZZER)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_c_source_compiles("
    #include <stddef.h>
    #include <stdint.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }"
    JOULESTAT_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
endif()
if(CMAKE_C_COMPILER_ID MATCHES "Clang" AND JOULESTAT_HAVE_LIBFUZZER)
  set(_podres_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
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
  target_compile_options(fuzz-pod-resources PRIVATE ${_podres_fuzz_flags})
  target_link_options(fuzz-pod-resources PRIVATE ${_podres_fuzz_flags})
  joulestat_warnings(fuzz-pod-resources)
  if(NOT DEFINED JOULESTAT_FUZZ_SECONDS)
    set(JOULESTAT_FUZZ_SECONDS 30)
  endif()
  set(_podres_work ${CMAKE_BINARY_DIR}/fuzz-work/pod-resources)
  file(MAKE_DIRECTORY ${_podres_work})
  add_test(NAME fuzz-live-pod-resources
           COMMAND fuzz-pod-resources -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
                   ${_podres_work} ${_podres_fuzz_dir}/corpus/pod-resources)
  math(EXPR _podres_fuzz_timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz-live-pod-resources PROPERTIES LABELS fuzz
                       TIMEOUT ${_podres_fuzz_timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# End to end: joulestat serve + the grpcio pod-resources peer + the simulated GPU node.
add_test(NAME podres-e2e
         COMMAND ${_podres_dir}/podres-e2e.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(podres-e2e PROPERTIES LABELS e2e TIMEOUT 180)

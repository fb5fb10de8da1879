# Process identity (area 5): fuzz targets for the /proc parsers.
#
# fuzz-replay-<target>: replays tests/fuzz/corpus/<target>/ through the fuzz entry point
#   with a plain main() (tests/fuzz/fuzz-main.c); any compiler, label fuzz-replay.
# fuzz-live-<target>: libFuzzer for JOULESTAT_FUZZ_SECONDS, starting from the corpus;
#   only with clang (libFuzzer ships with it), label fuzz. New inputs go to the build tree,
#   never into the checked-in corpus.

set(_identity_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
set(_identity_parse_dir ${CMAKE_SOURCE_DIR}/src/parse)
set(_identity_fuzz_targets cgroup-path proc-pid-stat)
set(JOULESTAT_FUZZ_SECONDS 30 CACHE STRING "Seconds per live libFuzzer test")

foreach(t IN LISTS _identity_fuzz_targets)
  add_executable(fuzz-replay-${t} ${_identity_fuzz_dir}/fuzz-${t}.c ${_identity_fuzz_dir}/fuzz-main.c)
  target_include_directories(fuzz-replay-${t} PRIVATE ${_identity_fuzz_dir})
  target_link_libraries(fuzz-replay-${t} PRIVATE js_parse js_base)
  joulestat_warnings(fuzz-replay-${t})
  add_test(NAME fuzz-replay-${t} COMMAND fuzz-replay-${t} ${_identity_fuzz_dir}/corpus/${t})
  set_tests_properties(fuzz-replay-${t} PROPERTIES LABELS fuzz-replay TIMEOUT 120)
endforeach()

set(_identity_live_fuzz OFF)
if(CMAKE_C_COMPILER_ID MATCHES "Clang")
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
  set(_identity_live_fuzz ${JOULESTAT_HAVE_LIBFUZZER})
elseif(JOULESTAT_FUZZ)
  message(WARNING "JOULESTAT_FUZZ: libFuzzer needs clang (-DCMAKE_C_COMPILER=clang); "
                  "only the corpus replay tests are built")
endif()

if(_identity_live_fuzz)
  set(_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  foreach(t IN LISTS _identity_fuzz_targets)
    # The parsers are compiled into the target so libFuzzer sees their coverage.
    add_executable(fuzz-${t} ${_identity_fuzz_dir}/fuzz-${t}.c ${_identity_parse_dir}/cgroup_path.c
                   ${_identity_parse_dir}/environ.c ${_identity_parse_dir}/proc_pid_stat.c)
    target_include_directories(fuzz-${t} PRIVATE ${_identity_fuzz_dir} ${_identity_parse_dir})
    target_compile_options(fuzz-${t} PRIVATE ${_fuzz_flags})
    target_link_options(fuzz-${t} PRIVATE ${_fuzz_flags})
    joulestat_warnings(fuzz-${t})
    set(_work ${CMAKE_BINARY_DIR}/fuzz-work/${t})
    file(MAKE_DIRECTORY ${_work})
    add_test(NAME fuzz-live-${t}
             COMMAND fuzz-${t} -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                     -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1
                     ${_work} ${_identity_fuzz_dir}/corpus/${t})
    math(EXPR _fuzz_timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
    set_tests_properties(fuzz-live-${t} PROPERTIES LABELS fuzz TIMEOUT ${_fuzz_timeout}
                         ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endforeach()
endif()

# calloc() failing on demand in the identity pool's test (its __wrap_calloc).
target_link_options(test-procfs-identity PRIVATE -Wl,--wrap=calloc)

# The fuzz tests' common parts, for the tests/*.cmake files that register them:
#
# fuzz-replay-NAME: replays tests/fuzz/corpus/NAME/ through a fuzz entry point with a plain
#   main() (tests/fuzz/fuzz-main.c); any compiler, label fuzz-replay.
# fuzz-live-NAME: libFuzzer for JOULESTAT_FUZZ_SECONDS, starting from the corpus; only with
#   clang (libFuzzer ships with it), label fuzz. New inputs go to the build tree, never into
#   the checked-in corpus.
set(JOULESTAT_FUZZ_SECONDS 30 CACHE STRING "Seconds per live libFuzzer test")
set(JOULESTAT_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

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
elseif(JOULESTAT_FUZZ)
  message(WARNING "JOULESTAT_FUZZ: libFuzzer needs clang (-DCMAKE_C_COMPILER=clang); "
                  "only the corpus replay tests are built")
endif()

# joulestat_fuzz_replay(NAME SOURCES file... LIBS lib...): fuzz-replay-NAME.
function(joulestat_fuzz_replay name)
  cmake_parse_arguments(F "" "" "SOURCES;LIBS" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
  add_executable(fuzz-replay-${name} ${F_SOURCES} ${dir}/fuzz-main.c)
  target_include_directories(fuzz-replay-${name} PRIVATE ${dir})
  target_link_libraries(fuzz-replay-${name} PRIVATE ${F_LIBS})
  joulestat_warnings(fuzz-replay-${name})
  add_test(NAME fuzz-replay-${name} COMMAND fuzz-replay-${name} ${dir}/corpus/${name})
  set_tests_properties(fuzz-replay-${name} PROPERTIES LABELS fuzz-replay TIMEOUT 120)
endfunction()

# joulestat_fuzz_live(NAME TARGET target MAX_LEN bytes [DICT file]): fuzz-live-NAME runs the
# libFuzzer TARGET the caller built (with the code under test compiled in, for coverage).
function(joulestat_fuzz_live name)
  cmake_parse_arguments(F "" "TARGET;MAX_LEN;DICT" "" ${ARGN})
  set(dir ${CMAKE_SOURCE_DIR}/tests/fuzz)
  set(work ${CMAKE_BINARY_DIR}/fuzz-work/${name})
  set(dict)
  if(F_DICT)
    set(dict -dict=${F_DICT})
  endif()
  target_compile_options(${F_TARGET} PRIVATE ${JOULESTAT_FUZZ_FLAGS})
  target_link_options(${F_TARGET} PRIVATE ${JOULESTAT_FUZZ_FLAGS})
  joulestat_warnings(${F_TARGET})
  file(MAKE_DIRECTORY ${work})
  add_test(NAME fuzz-live-${name}
           COMMAND ${F_TARGET} -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -max_len=${F_MAX_LEN} -print_final_stats=1 ${dict} ${work}
                   ${dir}/corpus/${name})
  math(EXPR timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz-live-${name} PROPERTIES LABELS fuzz TIMEOUT ${timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endfunction()

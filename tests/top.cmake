# joulestat top: the exposition parser and the model under fuzzing, like identity.cmake's:
# fuzz-replay-prom-parse replays tests/fuzz/corpus/prom-parse/ (label fuzz-replay);
# fuzz-live-prom-parse runs libFuzzer with clang (label fuzz). This file sorts after
# identity.cmake, which finds out whether libFuzzer works.
set(_top_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)

add_executable(fuzz-replay-prom-parse ${_top_fuzz_dir}/fuzz-prom-parse.c ${_top_fuzz_dir}/fuzz-main.c)
target_include_directories(fuzz-replay-prom-parse PRIVATE ${_top_fuzz_dir})
target_link_libraries(fuzz-replay-prom-parse PRIVATE js_top js_parse js_base m)
joulestat_warnings(fuzz-replay-prom-parse)
add_test(NAME fuzz-replay-prom-parse
         COMMAND fuzz-replay-prom-parse ${_top_fuzz_dir}/corpus/prom-parse)
set_tests_properties(fuzz-replay-prom-parse PROPERTIES LABELS fuzz-replay TIMEOUT 120)

if(JOULESTAT_HAVE_LIBFUZZER)
  set(_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)
  # The parser's and the model's sources are compiled in, so libFuzzer sees their coverage.
  add_executable(fuzz-prom-parse ${_top_fuzz_dir}/fuzz-prom-parse.c
                 ${CMAKE_SOURCE_DIR}/src/parse/prom_parse.c ${CMAKE_SOURCE_DIR}/src/top/top_model.c)
  target_include_directories(fuzz-prom-parse PRIVATE ${_top_fuzz_dir} ${CMAKE_SOURCE_DIR}/src/parse
                                                     ${CMAKE_SOURCE_DIR}/src/top)
  target_link_libraries(fuzz-prom-parse PRIVATE js_base m)
  target_compile_options(fuzz-prom-parse PRIVATE ${_fuzz_flags})
  target_link_options(fuzz-prom-parse PRIVATE ${_fuzz_flags})
  joulestat_warnings(fuzz-prom-parse)
  set(_work ${CMAKE_BINARY_DIR}/fuzz-work/prom-parse)
  file(MAKE_DIRECTORY ${_work})
  add_test(NAME fuzz-live-prom-parse
           COMMAND fuzz-prom-parse -max_total_time=${JOULESTAT_FUZZ_SECONDS} -timeout=10
                   -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 ${_work}
                   ${_top_fuzz_dir}/corpus/prom-parse)
  math(EXPR _fuzz_timeout "${JOULESTAT_FUZZ_SECONDS} + 120")
  set_tests_properties(fuzz-live-prom-parse PROPERTIES LABELS fuzz TIMEOUT ${_fuzz_timeout}
                       ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()

# joulestat top in a real terminal (tmux): local sources and a /metrics URL, keys, pane.
add_test(NAME top-tmux COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/top-tmux.sh ${CMAKE_BINARY_DIR}
                               ${CMAKE_SOURCE_DIR})
set_tests_properties(top-tmux PROPERTIES LABELS e2e TIMEOUT 300)

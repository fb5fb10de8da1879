# joulestat top: the exposition parser and the model under fuzzing: fuzz-replay-prom-parse
# and fuzz-live-prom-parse (cmake/FuzzTests.cmake).
set(_top_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)

joulestat_fuzz_replay(prom-parse SOURCES ${_top_fuzz_dir}/fuzz-prom-parse.c
                      LIBS js_top js_parse js_base m)

if(JOULESTAT_HAVE_LIBFUZZER)
  # The parser's and the model's sources are compiled in, so libFuzzer sees their coverage.
  add_executable(fuzz-prom-parse ${_top_fuzz_dir}/fuzz-prom-parse.c
                 ${CMAKE_SOURCE_DIR}/src/parse/prom_parse.c ${CMAKE_SOURCE_DIR}/src/top/top_model.c)
  target_include_directories(fuzz-prom-parse PRIVATE ${_top_fuzz_dir} ${CMAKE_SOURCE_DIR}/src/parse
                                                     ${CMAKE_SOURCE_DIR}/src/top)
  target_link_libraries(fuzz-prom-parse PRIVATE js_base m)
  joulestat_fuzz_live(prom-parse TARGET fuzz-prom-parse MAX_LEN 8192)
endif()

# joulestat top in a real terminal (tmux): local sources and a /metrics URL, keys, pane.
add_test(NAME top-tmux COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/top-tmux.sh ${CMAKE_BINARY_DIR}
                               ${CMAKE_SOURCE_DIR})
# Alone: its exporter learns two intensities from regular ticks, and beside the live fuzzers
# (a core each) under ASan one was still unlearned after 120 s in a CI run.
set_tests_properties(top-tmux PROPERTIES LABELS "e2e;once" TIMEOUT 300 RUN_SERIAL ON)

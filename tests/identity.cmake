# Process identity (area 5): fuzz targets for the /proc parsers (cmake/FuzzTests.cmake).
set(_identity_parse_dir ${CMAKE_SOURCE_DIR}/src/parse)

foreach(t cgroup-path proc-pid-stat)
  joulestat_fuzz_replay(${t} SOURCES ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz-${t}.c
                        LIBS js_parse js_base)
  if(JOULESTAT_HAVE_LIBFUZZER)
    # The parsers are compiled into the target so libFuzzer sees their coverage.
    add_executable(fuzz-${t} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz-${t}.c
                   ${_identity_parse_dir}/cgroup_path.c ${_identity_parse_dir}/environ.c
                   ${_identity_parse_dir}/proc_pid_stat.c)
    target_include_directories(fuzz-${t} PRIVATE ${CMAKE_SOURCE_DIR}/tests/fuzz
                               ${_identity_parse_dir})
    joulestat_fuzz_live(${t} TARGET fuzz-${t} MAX_LEN 4096)
  endif()
endforeach()

# calloc() failing on demand in the identity pool's test (its __wrap_calloc).
target_link_options(test-procfs-identity PRIVATE -Wl,--wrap=calloc)

# The optional libraries missing (tests/libs/test-libs-missing.c): the loaders are compiled
# into each test with sonames that do not exist, so the test's copy stands in for the
# project library's (the archive member is not pulled in) and no production knob is needed.
set(_libs_missing libjoulestat-test-missing.so.0)
add_executable(test-libs-missing-yaml ${CMAKE_CURRENT_SOURCE_DIR}/libs/test-libs-missing.c
                                      ${CMAKE_SOURCE_DIR}/src/http/yaml_loader.c)
target_compile_definitions(test-libs-missing-yaml PRIVATE TEST_MISSING_YAML
                           YAML_LOAD_SONAME="${_libs_missing}")
add_executable(test-libs-missing ${CMAKE_CURRENT_SOURCE_DIR}/libs/test-libs-missing.c
                                 ${CMAKE_SOURCE_DIR}/src/http/crypt_loader.c
                                 ${CMAKE_SOURCE_DIR}/src/kube/jansson_loader.c)
target_compile_definitions(test-libs-missing PRIVATE CRYPT_LOAD_SONAME="${_libs_missing}"
                           JANSSON_LOAD_SONAME="${_libs_missing}")
add_executable(test-libs-missing-seccomp ${CMAKE_CURRENT_SOURCE_DIR}/libs/test-libs-missing.c
                                         ${CMAKE_SOURCE_DIR}/src/daemon/syscall_filter.c)
target_compile_definitions(test-libs-missing-seccomp PRIVATE TEST_MISSING_SECCOMP
                           SECCOMP_LOAD_SONAME="${_libs_missing}")
target_include_directories(test-libs-missing-seccomp PRIVATE ${SECCOMP_INCLUDE_DIRS})
foreach(t test-libs-missing-yaml test-libs-missing test-libs-missing-seccomp)
  target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/src/http ${CMAKE_SOURCE_DIR}/src/kube
                                          ${CMAKE_SOURCE_DIR}/src/daemon)
  target_link_libraries(${t} PRIVATE js_testutil js_daemon)
  joulestat_warnings(${t})
  add_test(NAME ${t} COMMAND ${t})
  set_tests_properties(${t} PROPERTIES LABELS unit TIMEOUT 60)
endforeach()

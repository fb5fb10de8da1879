# End-to-end tests: the real binary against the simulated GPU node.
add_test(NAME replay-scenarios
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/replay-scenarios.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(replay-scenarios PROPERTIES LABELS e2e TIMEOUT 300)

add_test(NAME prometheus-e2e
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/prometheus-e2e.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(prometheus-e2e PROPERTIES LABELS e2e TIMEOUT 300 RUN_SERIAL ON)

add_test(NAME cli COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/cli.sh ${CMAKE_BINARY_DIR}
                          ${CMAKE_SOURCE_DIR})
set_tests_properties(cli PROPERTIES LABELS e2e TIMEOUT 120)

# --state-dir: counters survive a stop and start on the same running scenario.
add_test(NAME restart COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/restart.sh ${CMAKE_BINARY_DIR}
                              ${CMAKE_SOURCE_DIR})
set_tests_properties(restart PROPERTIES LABELS e2e TIMEOUT 120)

# my-gpu-exporter's README queries through a real Prometheus (--metric-prefix=my_gpu_process).
add_test(NAME compat-queries
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/compat-queries.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(compat-queries PROPERTIES LABELS "e2e;once" TIMEOUT 300)

# joulestat run -- CMD: the command's status and energy.
add_test(NAME run-command COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/run-command.sh
                                  ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(run-command PROPERTIES LABELS e2e TIMEOUT 120)

add_test(NAME http-starvation
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/http-starvation.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
# Sanitizer runtimes multiply resident memory: the script checks the memory bound only
# without them.
set_tests_properties(http-starvation PROPERTIES LABELS e2e TIMEOUT 120 RUN_SERIAL ON
                     ENVIRONMENT "JOULESTAT_SANITIZE=${JOULESTAT_SANITIZE}")

add_test(NAME http-reload
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/http-reload.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(http-reload PROPERTIES LABELS e2e TIMEOUT 120)

add_test(NAME ps-escape COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/ps-escape.sh ${CMAKE_BINARY_DIR}
                                ${CMAKE_SOURCE_DIR})
set_tests_properties(ps-escape PROPERTIES LABELS e2e TIMEOUT 60)

add_test(NAME http-probes
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/http-probes.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(http-probes PROPERTIES LABELS e2e TIMEOUT 120)

# serve after start: capabilities dropped in every thread, no-new-privileges, the seccomp
# filter, and serving under it (TLS, auth, reload, state file) through the end of the
# 8-GPU scenario.
add_test(NAME lockdown COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/lockdown.sh ${CMAKE_BINARY_DIR}
                               ${CMAKE_SOURCE_DIR})
set_tests_properties(lockdown PROPERTIES LABELS e2e TIMEOUT 120)

# exporter-toolkit's client certificates, cipher suites and rate limit with curl and
# openssl; valid configurations start joulestat, invalid ones are refused.
add_test(NAME http-mtls COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/http-mtls.sh ${CMAKE_BINARY_DIR}
                                ${CMAKE_SOURCE_DIR})
set_tests_properties(http-mtls PROPERTIES LABELS e2e TIMEOUT 120)

# exporter-toolkit's own web-config test files (tests/http/toolkit): its valid ones start
# joulestat and serve as its tests expect, its invalid ones are refused naming file, line, key.
add_test(NAME http-toolkit COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/http-toolkit.sh
                                   ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(http-toolkit PROPERTIES LABELS e2e TIMEOUT 120 SKIP_RETURN_CODE 77)

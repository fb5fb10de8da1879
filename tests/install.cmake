# A newcomer's path: make install and joulestat(8), starting serve (the listen address
# before any source, log lines by destination), check sampling every source, and the
# shipped SourceDown alert against real output for sources switched off and sources down.
set(_install_dir ${CMAKE_CURRENT_LIST_DIR}/install)
add_test(NAME install-tree COMMAND ${_install_dir}/install-check.sh ${CMAKE_BINARY_DIR}
                                   ${CMAKE_SOURCE_DIR})
add_test(NAME man-page COMMAND ${_install_dir}/man-page.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
add_test(NAME serve-startup COMMAND ${CMAKE_CURRENT_LIST_DIR}/e2e/startup.sh ${CMAKE_BINARY_DIR}
                                    ${CMAKE_SOURCE_DIR})
add_test(NAME check-sources COMMAND ${CMAKE_CURRENT_LIST_DIR}/e2e/check-sources.sh
                                    ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
add_test(NAME deploy-source-alert COMMAND ${CMAKE_CURRENT_LIST_DIR}/deploy/source-alert.sh
                                          ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(install-tree man-page PROPERTIES LABELS deploy TIMEOUT 120)
set_tests_properties(serve-startup check-sources PROPERTIES LABELS e2e TIMEOUT 120)
set_tests_properties(deploy-source-alert PROPERTIES LABELS "deploy;e2e" TIMEOUT 120)

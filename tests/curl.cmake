# libcurl loaded only when the Kubernetes API is configured: /proc/PID/maps of joulestat serve
# with and without the API, and with the library missing.
add_test(NAME curl-maps COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/kube/curl-maps.sh ${CMAKE_BINARY_DIR}
                                ${CMAKE_SOURCE_DIR})
set_tests_properties(curl-maps PROPERTIES LABELS e2e TIMEOUT 120)

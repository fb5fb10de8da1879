# Kubernetes API pod metadata: a fake HTTPS API server and joulestat serve on the simulated
# GPU node (names, pod recreated, API server outage, wrong token).
add_test(NAME kube-e2e COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/kube/kube-e2e.sh ${CMAKE_BINARY_DIR}
                               ${CMAKE_SOURCE_DIR})
set_tests_properties(kube-e2e PROPERTIES LABELS e2e TIMEOUT 180)

# Deployment files (deploy/): Kubernetes manifests, Dockerfile, Prometheus rules and the
# Grafana dashboard, checked without a cluster. Debian's python3-yaml lives only in
# /usr/bin/python3, hence the explicit interpreter.
set(_deploy_py /usr/bin/python3)
set(_deploy_dir ${CMAKE_CURRENT_SOURCE_DIR}/deploy)

add_test(NAME deploy-k8s-manifests
         COMMAND ${_deploy_py} ${_deploy_dir}/k8s_check.py ${CMAKE_SOURCE_DIR}/deploy/kubernetes
                 $<TARGET_FILE:joulestat>)
add_test(NAME deploy-prometheus-rules
         COMMAND ${_deploy_py} ${_deploy_dir}/rules_check.py ${CMAKE_SOURCE_DIR}/deploy/prometheus
                 ${CMAKE_SOURCE_DIR}/docs/METRICS.md)
add_test(NAME deploy-grafana-dashboard
         COMMAND ${_deploy_py} ${_deploy_dir}/dashboard_check.py
                 ${CMAKE_SOURCE_DIR}/deploy/grafana/joulestat-dashboard.json
                 ${CMAKE_SOURCE_DIR}/docs/METRICS.md
                 ${CMAKE_SOURCE_DIR}/deploy/prometheus/joulestat-rules.yaml)
set(_deploy_tests deploy-k8s-manifests deploy-prometheus-rules deploy-grafana-dashboard
                  deploy-checker-selftest)

# The image ships a plain build: a sanitizer build links runtimes the image does not carry,
# so the Dockerfile's library list is compared with unsanitized binaries only.
if(JOULESTAT_SANITIZE)
  set(_deploy_selftest_mode nodocker)
else()
  set(_deploy_selftest_mode all)
  add_test(NAME deploy-dockerfile
           COMMAND ${_deploy_py} ${_deploy_dir}/dockerfile_check.py
                   ${CMAKE_SOURCE_DIR}/deploy/kubernetes/Dockerfile $<TARGET_FILE:joulestat>
                   ${CMAKE_SOURCE_DIR})
  list(APPEND _deploy_tests deploy-dockerfile)
endif()

# A test of the tests: each checker must fail on deliberately broken copies.
add_test(NAME deploy-checker-selftest
         COMMAND ${_deploy_py} ${_deploy_dir}/selftest.py ${CMAKE_SOURCE_DIR}
                 $<TARGET_FILE:joulestat> ${_deploy_selftest_mode})
set_tests_properties(${_deploy_tests} PROPERTIES LABELS "deploy;lint" TIMEOUT 120)

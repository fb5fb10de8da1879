# scripts/gpu-report, the real-GPU validation's scoring, on the validation protocol played
# by the simulated node (tests/gpu/validation-protocol.scn; docs/VALIDATION.md).
add_test(NAME gpu-report
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu-report.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(gpu-report PROPERTIES LABELS e2e TIMEOUT 300)

# scripts/gpu-validate where there is no GPU: nvidia-smi, joulestat, gpu-probe and MPS
# faked, the workloads replaced by a program with their command line and result line
# (bench/gpu/workload_args.h): every command line the script builds must be one the
# workloads take, a failed workload must fail the run, accounting mode must be set back.
# Where nvcc is, the real bench/gpu/workloads.cu is built too and given those same lines.
# Shell and a fake workload only: run once (under the sanitizers), not in both builds.
add_executable(gpu-fake-workload ${CMAKE_CURRENT_SOURCE_DIR}/gpu/fake-workload.c)
target_include_directories(gpu-fake-workload PRIVATE ${CMAKE_SOURCE_DIR}/bench/gpu)
joulestat_warnings(gpu-fake-workload)
add_test(NAME gpu-validate
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/gpu-validate.sh
                 $<TARGET_FILE:gpu-fake-workload> ${CMAKE_SOURCE_DIR})
set_tests_properties(gpu-validate PROPERTIES LABELS "e2e;once" TIMEOUT 300)

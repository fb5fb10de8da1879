# SLURM and the rest of process identity (area 8).
#
# slurm-cgroup / slurm-linuxproc: a real one-node SLURM cluster (munged, slurmctld, slurmd
#   from Debian's slurm-wlm) runs srun and sbatch jobs; joulestat, on the real /proc and a
#   fake RAPL zone, must give their CPU energy to exactly those job ids, and each job's
#   energy must equal the sum of its processes plus its unseen part. cgroup: jobs found in
#   the cgroup/v1 paths of proctrack/cgroup; linuxproc: from SLURM_JOB_ID in environ.
#   Skipped (exit 77, reason printed) where the daemons cannot start. RUN_SERIAL: both
#   use this host's node name, so their cgroup paths and job ids would collide.
# ps-all: `joulestat ps --all` (table and JSON) on fixture trees, the simulated GPU and /proc.
# systemd-unit: deploy/systemd/joulestat.service verified (skipped without systemd-analyze).

foreach(mode cgroup linuxproc)
  add_test(NAME slurm-${mode}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm-e2e.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR} ${mode})
  set_tests_properties(slurm-${mode} PROPERTIES LABELS "slurm;e2e" TIMEOUT 180
                       SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

add_test(NAME ps-all COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/ps-all.sh ${CMAKE_BINARY_DIR}
                             ${CMAKE_SOURCE_DIR})
set_tests_properties(ps-all PROPERTIES LABELS e2e TIMEOUT 120)

# deploy/systemd/joulestat.service: systemd-analyze verify, ExecStart flags, capabilities.
add_test(NAME systemd-unit COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm/systemd-verify.sh
                                   ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(systemd-unit PROPERTIES LABELS deploy TIMEOUT 60 SKIP_RETURN_CODE 77)

# `joulestat check`: cgroup version (v2, v1, hybrid, none) and environ permission lines.
add_test(NAME check-identity COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/check-identity.sh
                                     ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(check-identity PROPERTIES LABELS e2e TIMEOUT 60)

# slurm-last-joule: jobs of 2 s, 8 s and 20 s and a 2-element array job on one shared node,
#   joulestat at its default intervals: every job present, each job's CPU energy within 2 %
#   of its CPU-time share of the fake zone, conservation to the microjoule (docs/SLURM.md).
#   The same with a 60 s job: `make slurm-long` (outside the suite, for its length).
#   Its 2 % bound is a timing figure, so it runs in the optimised build only (label slow);
#   slurm-cgroup and slurm-linuxproc take the same watcher through the sanitizers.
add_test(NAME slurm-last-joule
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm-last-joule.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR} 20)
set_tests_properties(slurm-last-joule PROPERTIES LABELS "slurm;e2e;slow" TIMEOUT 240
                     SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)

# slurm-acct: energy in sacct. MariaDB + slurmdbd beside the cluster, the Epilog
#   deploy/slurm/joulestat-slurm-epilog writes joulestat's figure to each job's AdminComment;
#   sacct must show it for every job (about 20 s; `make slurm-acct` runs it alone).
add_test(NAME slurm-acct COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm/slurm-acct.sh
                                 ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(slurm-acct PROPERTIES LABELS "slurm;e2e;once" TIMEOUT 240 SKIP_RETURN_CODE 77
                                           RUN_SERIAL TRUE)

# deploy/slurm/joulestat-slurm-epilog with curl and sacctmgr stubbed: exit 0 always, final
#   and partial figures, nothing written while joulestat does not answer.
add_test(NAME slurm-epilog COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/slurm/epilog-check.sh
                                   ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(slurm-epilog PROPERTIES LABELS deploy TIMEOUT 60)

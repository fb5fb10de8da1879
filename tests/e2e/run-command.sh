#!/usr/bin/env bash
# `joulestat run -- CMD`: the command's exit status comes back, and the energy it used is
# printed; on the real /proc with a fake RAPL zone (+2 J every 100 ms) a CPU burner and
# its child get CPU energy, never more than the zone measured while it ran; a missing
# source is said so; a command that cannot start exits 127 with the reason. A SIGINT to
# joulestat (a Ctrl-C reaches the command too) does not cost the report, and a SIGTERM is
# passed on to the command. Where it can, the command runs in a cgroup of its own, so a
# process that leaves its tree by a double fork is still followed; a GPU process too short
# for any scan is followed by the kernel's exec events.
set -euo pipefail
build=$1 src=$2
. "$src/tests/e2e/lib.sh"
js=$build/joulestat

# 1. The exit status, and what is missing said plainly.
status=0
"$js" run --no-gpu --rapl-source off -- sh -c 'exit 3' 2>"$E2E_TMP/err" || status=$?
[[ $status == 3 ]] || e2e_fail "run -- sh -c 'exit 3' exited $status"
grep -q "exit status 3" "$E2E_TMP/err" || e2e_fail "no report: $(cat "$E2E_TMP/err")"
status=0
"$js" run --no-gpu --rapl-source off -- /no/such/command 2>"$E2E_TMP/err" || status=$?
[[ $status == 127 ]] || e2e_fail "a missing command exited $status"
grep -q "cannot start '/no/such/command'" "$E2E_TMP/err" || e2e_fail "no reason: $(cat "$E2E_TMP/err")"
# Found but not executable: 126, as from a shell. A script without "#!" is run by sh, as
# execvp(), time and perf stat run it.
printf 'exit 7\n' >"$E2E_TMP/script"
status=0
"$js" run --no-gpu --rapl-source off -- "$E2E_TMP/script" 2>"$E2E_TMP/err" || status=$?
[[ $status == 126 ]] || e2e_fail "a file without the x bit exited $status, not 126"
chmod +x "$E2E_TMP/script"
status=0
"$js" run --no-gpu --rapl-source off -- "$E2E_TMP/script" 2>"$E2E_TMP/err" || status=$?
[[ $status == 7 ]] || e2e_fail "a script without #! exited $status, not 7: $(cat "$E2E_TMP/err")"
# joulestat ignores SIGPIPE while the command runs (a warning written after `| head` left
# must not end it with the command still running); the command gets the default back.
# shellcheck disable=SC2016
"$js" run --no-gpu --rapl-source off -- sh -c \
    'grep ^SigIgn: /proc/$PPID/status; grep ^SigIgn: /proc/self/status' >"$E2E_TMP/out" 2>/dev/null ||
    e2e_fail "run failed: $(cat "$E2E_TMP/out")"
python3 - "$E2E_TMP/out" <<'EOP' || e2e_fail "SIGPIPE dispositions: $(cat "$E2E_TMP/out")"
import sys
run, command = (int(l.split()[1], 16) for l in open(sys.argv[1]))
assert run & (1 << 12), "joulestat does not ignore SIGPIPE"    # bit 13 - 1
assert not command & (1 << 12), "the command starts with SIGPIPE ignored"
EOP
# --json is JSON whatever the arguments: quotes, control bytes, bytes that are not UTF-8,
# and a command whose last line on stderr has no newline.
"$js" run --json --no-gpu --rapl-source off -- sh -c 'printf partial >&2' $'q"\\\x01' \
    $'caf\xc3\xa9 \xff\xc3 \xed\xa0\x80' 2>"$E2E_TMP/err" || e2e_fail "run --json failed"
python3 - "$E2E_TMP/err" <<'EOP' || e2e_fail "run --json is no JSON: $(cat -v "$E2E_TMP/err")"
import json, sys
text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: raises on any bad byte
report = json.loads([l for l in text.splitlines() if l.startswith('{"command"')][-1])
assert report["command"][3:] == ['q"\\\x01', "caf\u00e9 \ufffd\ufffd \ufffd\ufffd\ufffd"], report
EOP
"$js" run 2>"$E2E_TMP/err" && e2e_fail "run without a command succeeded"
grep -q "run needs a command" "$E2E_TMP/err" || e2e_fail "no usage: $(cat "$E2E_TMP/err")"

# 2. Signals. SIGINT to joulestat alone: it goes on, and reports the command's own end.
# (env: a background job of a script starts with SIGINT ignored; a terminal's does not.)
env --default-signal=INT "$js" run --no-gpu --rapl-source off -- sh -c 'sleep 1.13; exit 4' \
    2>"$E2E_TMP/err" &
pid=$!
e2e_wait 10 pgrep -fx "sleep 1.13" || e2e_fail "the command did not start: $(cat "$E2E_TMP/err")"
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[[ $status == 4 ]] || e2e_fail "after a SIGINT to joulestat it exited $status, not the command's 4"
grep -q "exit status 4" "$E2E_TMP/err" || e2e_fail "no report after SIGINT: $(cat "$E2E_TMP/err")"
# SIGTERM: passed on; the command ends by it, and joulestat reports that (128 + 15).
"$js" run --no-gpu --rapl-source off -- sleep 31.7 2>"$E2E_TMP/err" &
pid=$!
# Once the command runs (before, joulestat is still opening its sources: on a loaded machine
# that can take longer than any fixed pause, and a SIGTERM then ends joulestat alone).
e2e_wait 10 pgrep -fx "sleep 31.7" || e2e_fail "the command did not start: $(cat "$E2E_TMP/err")"
started=$SECONDS
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[[ $status == 143 ]] || e2e_fail "after a SIGTERM it exited $status, not 143: $(cat "$E2E_TMP/err")"
((SECONDS - started < 10)) || e2e_fail "the command did not end with the SIGTERM"
grep -q "exit status 143" "$E2E_TMP/err" || e2e_fail "no report after SIGTERM: $(cat "$E2E_TMP/err")"
sleep 0.2
pgrep -fx "sleep 31.7" >/dev/null && e2e_fail "the command was left running after joulestat ended"

# 3. CPU energy of a command and its child, on a fake RAPL zone.
e2e_fake_rapl_zone "$E2E_TMP/sys"
E2E_PIDS+=("$E2E_FAKE_RAPL_PID")
burn='i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'
"$js" run --json --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" -- \
    sh -c "$burn & $burn; wait" 2>"$E2E_TMP/err" || e2e_fail "run failed: $(cat "$E2E_TMP/err")"
python3 - "$E2E_TMP/err" <<'EOP' || e2e_fail "run --json: $(cat "$E2E_TMP/err")"
import json, sys
report = json.loads([l for l in open(sys.argv[1]) if l.startswith('{"command"')][-1])
assert report["exit_status"] == 0, report
assert report["command"][0] == "sh", report
cpu = report["cpu_joules"].get("package", 0)
# The zone moves 20 W; the command gets its share of all CPUs' time, so more than nothing
# and never more than the zone measured over the run (one 100 ms step of slack).
limit = 20 * report["elapsed_seconds"] + 2
assert 0 < cpu <= limit, (cpu, limit)
assert abs(report["total_joules"] - cpu) < 1e-6, report
print(f"run: {cpu:.3f} J of CPU package over {report['elapsed_seconds']:.2f} s")
EOP
# 4. A command shorter than a tick still gets its CPU energy: the last window, when its exit
#    is seen, reads the zone too (it was 0 J when that came sooner than a scan interval).
"$js" run --json --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" -- python3 -c '
import time
t = time.monotonic() + 0.15
while time.monotonic() < t:
    pass' 2>"$E2E_TMP/err" || e2e_fail "run failed: $(cat "$E2E_TMP/err")"
python3 - "$E2E_TMP/err" <<'EOP' || e2e_fail "a short command: $(cat "$E2E_TMP/err")"
import json, sys
report = json.loads([l for l in open(sys.argv[1]) if l.startswith('{"command"')][-1])
cpu = report["cpu_joules"].get("package", 0)
assert 0 < cpu <= 20 * report["elapsed_seconds"] + 2, report
# (a 0.15 s command; the bound only catches a report that waited for something else:
# Python alone takes 2 s to start on a loaded 2-core machine)
assert report["elapsed_seconds"] < 10, report
print(f"run: a short command: {cpu:.3f} J over {report['elapsed_seconds']:.2f} s")
EOP

# 5. A command killed by a signal: joulestat ends by the same signal, so that a shell loop
#    stops at a Ctrl-C as it would without joulestat (an exit status of 130 does not).
python3 - "$js" <<'EOP' || e2e_fail "a command killed by SIGINT: joulestat did not end by it"
import signal, subprocess, sys
# SIGINT at its default in the command (a background job of a script starts with it ignored,
# and joulestat keeps an ignored signal ignored, as it should).
p = subprocess.run([sys.argv[1], "run", "--no-gpu", "--rapl-source", "off", "--",
                    "sh", "-c", "kill -INT $$"], stderr=subprocess.PIPE,
                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
assert p.returncode == -signal.SIGINT, (p.returncode, p.stderr)
assert b"signal" in p.stderr or b"130" in p.stderr, p.stderr
EOP

# 6. A process that leaves the command's tree at once (a double fork) and burns 1 s of CPU
#    while the command waits for it: where run can give the command a cgroup of its own (root,
#    cgroup v2 writable), that CPU time is the command's: 20 W x its CPU time / the CPUs. Followed
#    by its tree alone, it would get almost nothing (it is gone from the tree before the
#    first scan). What the command leaves running is moved out, and the cgroup removed.
v2=
for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [[ $(stat -fc %T "$m" 2>/dev/null) == cgroup2fs ]] && v2=$m && break
done
# shellcheck disable=SC2016
double_fork='(python3 -c "
import sys, time
t = time.process_time() + 1.0
while time.process_time() < t:
    pass
open(sys.argv[1], \"w\").write(\"%f\\n\" % time.process_time())" "$0" &); (sleep $1 &)
read -r cpu <"$0"; echo "$cpu" >"$0.cpu"'
mkfifo "$E2E_TMP/burnt" # the command waits on it, without using CPU
left=30.$$ # what it leaves running: a sleep no other test starts
"$js" run --json --no-gpu --rapl-source powercap --path.sysfs "$E2E_TMP/sys" -- \
    sh -c "$double_fork" "$E2E_TMP/burnt" "$left" 2>"$E2E_TMP/err" &
run_pid=$!
wait "$run_pid" || e2e_fail "run failed: $(cat "$E2E_TMP/err")"
cpus=$(grep -c '^cpu[0-9]' /proc/stat)
writable=0
[[ -n $v2 && -w $v2 ]] && writable=1
python3 - "$E2E_TMP/err" "$cpus" "$writable" "$(cat "$E2E_TMP/burnt.cpu")" <<'EOP' || e2e_fail "a double fork: $(cat "$E2E_TMP/err")"
import json, sys
report = json.loads([l for l in open(sys.argv[1]) if l.startswith('{"command"')][-1])
cpus, writable = int(sys.argv[2]), sys.argv[3] == "1"
cpu = report["cpu_joules"].get("package", 0)
if not writable:
    assert report["followed"] == "process_tree", report
    print("run: SKIP: no writable cgroup v2 here, so the command's own cgroup is not tested")
    sys.exit(0)
assert report["followed"] == "cgroup", report
burnt = float(sys.argv[4])  # the burner's own CPU time, its start-up included
want = 20 * burnt / cpus
# Above it: the shell's own time and its forks; below: the zone's writer lagging under load.
assert 0.8 * want <= cpu <= 1.5 * want, (cpu, want, report)
print(f"run: a double-forked burner: {cpu:.3f} J of CPU package "
      f"({burnt:.2f} s of CPU on {cpus} CPUs: {want:.3f} J)")
EOP
pid=$(pgrep -fx "sleep $left") || e2e_fail "the command's background sleep is gone"
if ((writable)); then
    grep -q joulestat-run "/proc/$pid/cgroup" && e2e_fail "a leftover process is still in run's cgroup"
    leftover=$(find "$v2" -name "joulestat-run-$run_pid-*" | head -1)
    [[ -z $leftover ]] || e2e_fail "run's cgroup was not removed: $leftover"
fi
kill "$pid"

# 7. A GPU process shorter than a scan (a CUDA test of a few hundred milliseconds), gone
# before any scan of the command's processes saw it: the kernel's exec events say the
# command started it, so its GPU energy is the command's. The command forks, at a pid free
# now (ns_last_pid), a program of 150 ms half-way between two scans (every 200 ms from the
# start); the simulated GPU serves a process at that pid just after it ended. A late scan
# on a loaded machine may still see it: the line printed says which way it was followed.
sim=$build/sim/libnvidia-ml.so.1
if [[ ! -w /proc/sys/kernel/ns_last_pid ]]; then
    echo "run: SKIP: no writable ns_last_pid here, so a chosen pid cannot be forked"
else
    pid_max=$(cat /proc/sys/kernel/pid_max)
    target=$((($(cat /proc/sys/kernel/ns_last_pid) + 5000 + RANDOM) % pid_max))
    while ((target < 1000)) || [[ -e /proc/$target ]]; do target=$(((target + 7919) % pid_max)); done
    cat >"$E2E_TMP/short-gpu.scn" <<EOS
scenario name=run-short-gpu duration=60s sample-period=167ms
gpu 0 uuid=GPU-5e0a7c11-0000-4000-8000-000000000001 name="NVIDIA A100-PCIE-40GB"
    idle=40W max=250W memory=40GiB
process $target gpu=0 name=sleep start=1300ms stop=1400ms sm=90 coef=200W memory=1GiB
EOS
    # shellcheck disable=SC2016
    fork_target='sleep 1.02
echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
/bin/sleep 0.15 & p=$!; wait $p
echo "$p" >"$2"; sleep 0.5'
    JOULESTAT_SIM_SCENARIO=$E2E_TMP/short-gpu.scn "$js" run --json --log-level debug \
        --nvml-library "$sim" --rapl-source off -- sh -c "$fork_target" sh "$target" \
        "$E2E_TMP/forked" 2>"$E2E_TMP/err" || e2e_fail "run failed: $(cat "$E2E_TMP/err")"
    how="seen by a scan"
    grep -q "run: GPU process $target, gone before a scan saw it" "$E2E_TMP/err" &&
        how="followed by its exec events"
    if [[ $(cat "$E2E_TMP/forked") != "$target" ]]; then
        echo "run: SKIP: another fork on the node took pid $target first"
    elif ! grep -q 'exec events: each new program' "$E2E_TMP/err"; then
        echo "run: SKIP: no exec events here, so a GPU process shorter than a scan is not followed"
    else
        python3 - "$E2E_TMP/err" "$how" <<'EOP' || e2e_fail "a GPU process shorter than a scan: $(cat "$E2E_TMP/err")"
import json, sys
report = json.loads([l for l in open(sys.argv[1]) if l.startswith('{"command"')][-1])
gpus = report["gpus"]
assert len(gpus) == 1 and gpus[0]["gpu"] == 0, report
joules = gpus[0]["measured_joules"] + gpus[0]["estimated_joules"]
# 100 ms at 90 % of 200 W (18 J) and the GPU's idle of the windows it was in, at most 0.5 s.
assert 15 <= joules <= 40, report
print(f"run: a GPU process of 150 ms, {sys.argv[2]}: {joules:.3f} J of GPU 0")
EOP
    fi
fi

echo "run-command: ok"

/* SPDX-License-Identifier: MIT */
/* Scenario files: every shipped one loads, and malformed ones are refused with a message
 * that names the line. */
#include <dirent.h>

#include "test-sim-common.h"

#define HDR "scenario duration=10s\n"
#define GPU0 "gpu 0 uuid=GPU-x name=X idle=50W max=300W\n"

static const struct {
    const char *text;
    const char *message;
} bad[] = {
    {GPU0, "test.scn:1: missing 'scenario' line"},
    {HDR, "test.scn:1: no 'gpu' declared"},
    {HDR "\nwidget 3\n", "test.scn:3: unknown directive 'widget'"},
    {"scenario duration=ten\n", "test.scn:1: scenario: invalid value 'ten' for 'duration'"},
    {"scenario name=a\n", "test.scn:1: scenario: missing 'duration'"},
    {HDR HDR, "test.scn:2: scenario: declared twice"},
    {HDR "  colour=x\n", "test.scn:2: scenario: unknown key 'colour'"},
    {HDR "\n   sm=4\n", "test.scn:3: indented line does not continue a directive"},
    {HDR "gpu 0 uuid=\"GPU-x name=X\n", "test.scn:2: unterminated quoted value"},
    {HDR "gpu 0 uuid=\"a\\q\"\n", "test.scn:2: unknown escape in quoted value"},
    {HDR "gpu 0 uuid=\"a\"b\n", "test.scn:2: text right after a closing quote"},
    {HDR "gpu 0 =x\n", "test.scn:2: '=' without a key"},
    {HDR "gpu 1 uuid=GPU-x name=X idle=50W max=300W\n",
     "test.scn:2: gpu: index 1 out of order (expected 0)"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W\n", "test.scn:2: gpu: needs uuid, name, idle and max"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=500W max=300W\n",
     "test.scn:2: gpu: idle power above max power"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50kW max=300W\n",
     "test.scn:2: gpu: invalid value '50kW' for 'idle'"},
    {HDR GPU0 "gpu 1 uuid=GPU-x name=Y idle=50W max=300W\n",
     "test.scn:3: gpu: uuid 'GPU-x' already used by gpu 0"},
    {HDR GPU0 "gpu 1 uuid=GPU-y name=Y idle=1W max=2W compute-mode=shared\n",
     "test.scn:3: gpu: invalid value 'shared' for 'compute-mode'"},
    {HDR "process 1 gpu=0 name=a sm=5 coef=1W\n",
     "test.scn:2: gpu 0 is not declared (declare GPUs first)"},
    {HDR GPU0 "process 1 gpu=0 name=a\n    sm=5\n    coef=1W colour=red\n",
     "test.scn:5: process: unknown key 'colour'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5\n",
     "test.scn:3: process 1: needs gpu, name, sm and coef"},
    {HDR GPU0 "process 0 gpu=0 name=a sm=5 coef=1W\n",
     "test.scn:3: process: pid 0 is not a process"},
    {HDR GPU0 "process x gpu=0 name=a sm=5 coef=1W\n", "test.scn:3: process: invalid pid 'x'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=101 coef=1W\n",
     "test.scn:3: process: invalid value '101' for 'sm'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=duty on=50% coef=1W\n",
     "test.scn:3: process: sm=duty needs 'period' and 'on'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=duty period=1s on=2s coef=1W\n",
     "test.scn:3: process: 'on' longer than 'period'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=ramp over=1s level=5 coef=1W\n",
     "test.scn:3: process: 'level' does not apply to sm=ramp"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=50 period=1s coef=1W\n",
     "test.scn:3: process: 'period' does not apply to sm=<constant>"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=251W\n",
     "test.scn:3: process 1: idle + coef (301000 mW) above gpu 0 max power (300000 mW)"},
    /* Power values round to the nearest milliwatt, halves up. */
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=250999.5mW\n",
     "test.scn:3: process 1: idle + coef (301000 mW) above gpu 0 max power (300000 mW)"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50000.4mW max=300W\n"
         "process 1 gpu=0 name=a sm=5 coef=250000.5mW\n",
     "test.scn:3: process 1: idle + coef (300001 mW) above gpu 0 max power (300000 mW)"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=1W start=5s stop=5s\n",
     "test.scn:3: process 1: stop must be after start"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=1W gi=1\n",
     "test.scn:3: process: gi/ci on gpu 0 without MIG"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=1W type=video\n",
     "test.scn:3: process: invalid value 'video' for 'type'"},
    {HDR GPU0 "process 7 gpu=0 name=a sm=5 coef=1W stop=5s\n"
              "process 7 gpu=0 name=b sm=5 coef=1W start=4s\n",
     "test.scn:4: process 7: starts before the process of line 3 with the same pid stops"},
    {HDR GPU0 "process 7 gpu=0 name=a sm=5 coef=1W\nprocess 7 gpu=0 name=a sm=5 coef=1W\n",
     "test.scn:4: process 7: declared twice on gpu 0"},
    {HDR GPU0 "fault meltdown gpu=0\n", "test.scn:3: fault: unknown kind 'meltdown'"},
    {HDR GPU0 "fault gpu-lost gpu=0\n", "test.scn:3: fault gpu-lost: missing 'at'"},
    {HDR GPU0 "fault gpu-lost gpu=0 at=5s until=2s\n",
     "test.scn:3: fault gpu-lost: 'until' must be after 'at'"},
    {HDR GPU0 "fault counter-reset gpu=0 at=1s until=2s\n",
     "test.scn:3: fault: unknown key 'until'"},
    {HDR GPU0 "fault list-grows\n", "test.scn:3: fault list-grows: missing 'gpu'"},
    {HDR GPU0 "mig gpu=0 gi=1 ci=0 uuid=MIG-1\n", "test.scn:3: mig: gpu 0 does not have mig=on"},
    /* the physics keys */
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=300W,120W\n",
     "test.scn:3: process: invalid value '300W,120W' for 'coef'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=300W,120W@90s,250W@60s\n",
     "test.scn:3: process: invalid value '300W,120W@90s,250W@60s' for 'coef'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=300W@1s\n",
     "test.scn:3: process: invalid value '300W@1s' for 'coef'"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=5 coef=1W,251W@5s\n",
     "test.scn:3: process 1: idle + coef (301000 mW) above gpu 0 max power (300000 mW)"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W context-idle=40W idle-drift=10W/60s\n"
         "process 1 gpu=0 name=a sm=5 coef=201W\n",
     "test.scn:3: process 1: idle + idle-drift + context-idle + coef (301000 mW) above gpu 0 max "
     "power (300000 mW)"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W context-idle=251W\n",
     "test.scn:2: gpu: idle + idle-drift + context-idle above max power"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W power-average=150ms\n",
     "test.scn:2: gpu: power-average must be 0 or a multiple of 100ms up to 60s"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W power-sensor-duty=0%\n",
     "test.scn:2: gpu: power-sensor-duty must not be 0"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W power-sensor-duty=101%\n",
     "test.scn:2: gpu: invalid value '101%' for 'power-sensor-duty'"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W idle-drift=6W\n",
     "test.scn:2: gpu: invalid value '6W' for 'idle-drift'"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W idle-drift=6W/0s\n",
     "test.scn:2: gpu: invalid value '6W/0s' for 'idle-drift'"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W slice-overhead=100%\n",
     "test.scn:2: gpu: slice-overhead must be below 100%"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W time-slice=1s\n",
     "test.scn:2: gpu: time-slice must be 0 or 100us to 100ms"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W time-slice=10us\n",
     "test.scn:2: gpu: time-slice must be 0 or 100us to 100ms"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W power-noise=60%\n",
     "test.scn:2: gpu: power-noise above 50%"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W energy-step=11s\n",
     "test.scn:2: gpu: energy-step must be 0 or 1ms to 10s"},
    /* a step of a microsecond: a segment of the model each, hours of replay */
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W energy-step=1us\n",
     "test.scn:2: gpu: energy-step must be 0 or 1ms to 10s"},
    /* under a microsecond: would be 0, the key switched off */
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W energy-step=500ns\n",
     "test.scn:2: gpu: invalid value '500ns' for 'energy-step'"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W energy-start=1000000000000001\n",
     "test.scn:2: gpu: energy-start above 10^15 mJ"},
    {HDR GPU0 "process 1 gpu=0 name=a sm=duty period=2us on=50% coef=1W\n",
     "test.scn:3: process: period below 1ms"},
    /* a MIG reference checked once every line is read: the mig line may come after */
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W mig=on\n"
         "process 1 gpu=0 name=a sm=5 coef=1W gi=5 ci=0\n"
         "mig gpu=0 gi=1 ci=0 uuid=MIG-1\n",
     "test.scn:3: process: no MIG instance gi 5 ci 0 on gpu 0"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W mig=on\n"
         "process 1 gpu=0 name=a sm=5 coef=1W\n"
         "mig gpu=0 gi=1 ci=0 uuid=MIG-1\n",
     "test.scn:3: process 1: gi and ci needed on gpu 0 (MIG)"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W mig=on\n"
         "mig gpu=0 gi=1 ci=0 uuid=MIG-1 name=\"3g.40gb\"\n",
     "test.scn:3: mig: name must hold \" MIG \" and the profile, as the driver's do "
     "(\"NVIDIA A100-SXM4-40GB MIG 3g.20gb\")"},
    {HDR "gpu 0 uuid=GPU-x name=X idle=50W max=300W driver-phase=100ms\n",
     "test.scn:2: gpu: driver-phase must be below 100ms"},
    {HDR GPU0 "scenario seed=4\n", "test.scn:3: scenario: declared twice"},
    {"gpu 0 uuid=GPU-x name=X idle=50W max=300W\nscenario duration=1s seed=4\n",
     "test.scn:2: scenario: must come before the GPUs"},
    {"scenario duration=1s sample-phase=random\n",
     "test.scn:1: scenario: sample-phase is 'spread' or 'aligned', not 'random'"},
    {"scenario duration=1s util-entries=all\n",
     "test.scn:1: scenario: util-entries is 'every-sample' or 'per-process', not 'all'"},
};

static void test_malformed_scenarios(void **state) {
    char err[512];
    /* something valid first: a failed load must leave it running */
    ASSERT_OK(sim.joulestat_sim_load_string(HDR GPU0, "good.scn"));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = sim.joulestat_sim_load_string(bad[i].text, "test.scn");
        ASSERT_OK(sim.joulestat_sim_last_error(err, sizeof err));
        if (r != -EINVAL || strcmp(err, bad[i].message) != 0)
            fail_msg("case %zu: r=%d message '%s', expected '%s'", i, r, err, bad[i].message);
    }
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    unsigned int n = 0;
    assert_int_equal(sim.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
    assert_int_equal(n, 1);
    sim_stop();
}

static void test_missing_file(void **state) {
    char err[512];
    ASSERT_ERRNO(sim.joulestat_sim_load("/nonexistent/x.scn"), ENOENT);
    ASSERT_OK(sim.joulestat_sim_last_error(err, sizeof err));
    assert_string_equal(err, "/nonexistent/x.scn: cannot read: No such file or directory");
    ASSERT_ERRNO(sim.joulestat_sim_load(NULL), EINVAL);
    ASSERT_ERRNO(sim.joulestat_sim_last_error(NULL, 0), EINVAL);
}

/* Comments, quotes with escapes, continuation lines, units. */
static void test_syntax(void **state) {
    char name[96];
    unsigned long long e = 0;
    sim_start("# a comment\n"
              "scenario name=\"syntax test\" duration=1m30s # trailing comment\n"
              "    sample-period=0.5 uptime=1h tags=anything,goes\n"
              "\n"
              "gpu 0 uuid=GPU-q name=\"A \\\"quoted\\\" GPU\" idle=12.5W max=300000mW\n"
              "    energy-start=0x10 memory=1TiB\n"
              "process 9 gpu=0 name=averyveryverylongcommandname\n"
              "    # a comment inside a directive\n"
              "    sm=100 coef=0.5W\n");
    nvmlDevice_t d = sim_gpu(0);
    assert_int_equal(sim.nvmlDeviceGetName(d, name, sizeof name), NVML_SUCCESS);
    assert_string_equal(name, "A \"quoted\" GPU");
    uint64_t start, dur;
    ASSERT_OK(sim.joulestat_sim_get_span(&start, &dur));
    assert_int_equal(dur, 90000000ull);
    sim_at(2000000); /* 13 W for 2 s = 26 J */
    assert_int_equal(sim.nvmlDeviceGetTotalEnergyConsumption(d, &e), NVML_SUCCESS);
    assert_int_equal(e, 16 + 26000);
    nvmlMemory_t mem;
    assert_int_equal(sim.nvmlDeviceGetMemoryInfo(d, &mem), NVML_SUCCESS);
    assert_int_equal(mem.total, 1ull << 40);
    struct joulestat_sim_process_info info;
    ASSERT_OK(sim.joulestat_sim_process_info(0, &info));
    assert_string_equal(info.comm, "averyveryverylo"); /* 15 bytes, as the kernel keeps */
    /* 0.5 s samples: 4 of them at 100 % */
    nvmlProcessUtilizationSample_t s[8];
    unsigned int n = 8;
    assert_int_equal(sim.nvmlDeviceGetProcessUtilization(d, s, &n, 0), NVML_SUCCESS);
    assert_int_equal(n, 4);
    assert_int_equal(s[3].timeStamp, JOULESTAT_SIM_EPOCH_US + 2000000);
    sim_stop();
}

/* Every file in scenarios/ loads, and the big node has what it claims. */
static void test_shipped_scenarios_load(void **state) {
    char dir[1024], path[1400], err[512];
    int loaded = 0;
    DIR *d = opendir(test_source_path(dir, sizeof dir, "scenarios"));
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".scn") != 0)
            continue;
        (void)snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (sim.joulestat_sim_load(path) < 0) {
            sim.joulestat_sim_last_error(err, sizeof err);
            fail_msg("%s", err);
        }
        loaded++;
    }
    closedir(d);
    assert_true(loaded >= 24);

    size_t np = 0;
    unsigned int ng = 0;
    ASSERT_OK(sim.joulestat_sim_load(
        test_source_path(path, sizeof path, "scenarios/node-8gpu-64proc.scn")));
    assert_int_equal(sim.nvmlInit_v2(), NVML_SUCCESS);
    ASSERT_OK(sim.joulestat_sim_process_count(&np));
    assert_int_equal(np, 8 * 64);
    assert_int_equal(sim.nvmlDeviceGetCount_v2(&ng), NVML_SUCCESS);
    assert_int_equal(ng, 8);
    sim_stop();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed_scenarios),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_shipped_scenarios_load),
    };
    return cmocka_run_group_tests(tests, sim_lib_open, sim_lib_close);
}

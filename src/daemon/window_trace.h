/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

#include "sampler.h"

/*
 * --trace FILE: every GPU window as the split saw it, one line each, written by the
 * sampler as it books the window (replay, and serve on a real node, so that a run on real
 * GPUs can be scored against the baselines in scripts/accuracy-score):
 *
 *     W gpu t0_us t1_us energy_uj idle_uj pid:start_us:activity:group ...
 *
 * activity in percent-microseconds of SM time; group the pod, else the container, job or
 * service, else "-". Lines are written whole (line-buffered), so a reader following the file
 * never sees half of one.
 *
 * Opens path (truncating it) and has the sampler report to it. *ret_file is for the caller to
 * close once the sampler is freed. Returns 0 or a negative errno, said once in the log.
 */
int window_trace_attach(struct sampler *s, const char *path, FILE **ret_file);

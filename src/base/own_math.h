/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The two functions of libm that the estimator needs, so that the daemon does not map libm
 * (about 0.5 MiB resident for three functions; sqrt() is an instruction, the build passes
 * -fno-math-errno so the compiler emits it inline).
 */

/* e^x, within 2 ulp of the exact value; +inf above 709.78, 0 below -745.13, NaN stays. */
double own_exp(double x);

/* x rounded to the nearest integer, halves away from zero (as llround()). x must be finite
 * and within the range of long long. */
long long own_llround(double x);

/* SPDX-License-Identifier: MIT */
#include "own_math.h"

#include <stdint.h>
#include <string.h>

#define LOG2_E 1.44269504088896338700e+00
/* ln 2 in two parts: the high one has its low 32 bits zero, so k * LN2_HI is exact for any
 * k the range allows (|k| < 2^11). */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
#define EXP_MAX 709.782712893383973096
#define EXP_MIN -745.133219101941108420

/* 2^k for -1022 <= k <= 1023, built from its bits. */
static double power_of_two(int k) {
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double d;

    memcpy(&d, &bits, sizeof(d));
    return d;
}

double own_exp(double x) {
    double kf, r, p;
    long long k;

    if (__builtin_isnan(x))
        return x;
    if (x > EXP_MAX)
        return __builtin_huge_val();
    if (x < EXP_MIN)
        return 0;
    /* x = k ln 2 + r with |r| <= ln 2 / 2, and e^x = 2^k e^r. */
    kf = x * LOG2_E;
    k = (long long)(kf + (kf >= 0 ? 0.5 : -0.5));
    r = (x - (double)k * LN2_HI) - (double)k * LN2_LO;
    /* e^r - 1 by its Taylor series to r^13 (the next term is below 5e-18 here), summed from
     * the small end; adding the 1 last keeps the rounding error near half an ulp. */
    p = r *
        (1 +
         r / 2 *
             (1 +
              r / 3 *
                  (1 +
                   r / 4 *
                       (1 +
                        r / 5 *
                            (1 +
                             r / 6 *
                                 (1 +
                                  r / 7 *
                                      (1 +
                                       r / 8 *
                                           (1 +
                                            r / 9 *
                                                (1 +
                                                 r / 10 *
                                                     (1 + r / 11 *
                                                              (1 + r / 12 * (1 + r / 13))))))))))));
    p += 1;
    if (k > 1023)
        return p * power_of_two(1023) * 2;
    if (k < -1022)
        return p * power_of_two((int)k + 1000) * power_of_two(-1000);
    return p * power_of_two((int)k);
}

long long own_llround(double x) {
    long long i;
    double frac;

    /* From 2^52 on every double is an integer. */
    if (x >= 0x1p52 || x <= -0x1p52)
        return (long long)x;
    i = (long long)x;     /* toward zero */
    frac = x - (double)i; /* exact */
    if (frac >= 0.5)
        i++;
    else if (frac <= -0.5)
        i--;
    return i;
}

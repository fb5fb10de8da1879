/* SPDX-License-Identifier: MIT */
#include "gpu_idle_prior.h"

#include <stddef.h>
#include <string.h>

/* Most specific first: the first entry whose every word is in the name wins. */
static const struct {
    const char *words[3];
    double watts;
} typical_idle[] = {
    {{"H200"}, 75}, {{"H100", "PCIe"}, 50}, {{"H100"}, 70}, {{"A100", "PCIE"}, 40}, {{"A100"}, 55},
    {{"A30"}, 30},  {{"A10G"}, 25},         {{"A10"}, 30},  {{"L40S"}, 35},         {{"L40"}, 35},
    {{"L4"}, 16},   {{"T4"}, 10},           {{"V100"}, 40}, {{"P100"}, 30},
};

/* Whether word occurs in s as a whole word (bounded by the ends, spaces or '-'), in any case:
 * "A100-PCIE-40GB" and "A100 80GB PCIe" are both PCIe boards. */
static bool has_word(const char *s, const char *word) {
    size_t len = strlen(word);

    for (const char *p = strcasestr(s, word); p; p = strcasestr(p + 1, word)) {
        bool start = p == s || p[-1] == ' ' || p[-1] == '-';
        bool end = p[len] == '\0' || p[len] == ' ' || p[len] == '-';

        if (start && end)
            return true;
    }
    return false;
}

bool gpu_typical_idle_watts(const char *model, double *ret_watts) {
    if (!model)
        return false;
    for (size_t i = 0; i < sizeof(typical_idle) / sizeof(typical_idle[0]); i++) {
        bool all = true;

        for (size_t w = 0; w < 3 && typical_idle[i].words[w]; w++)
            all = all && has_word(model, typical_idle[i].words[w]);
        if (all) {
            *ret_watts = typical_idle[i].watts;
            return true;
        }
    }
    return false;
}

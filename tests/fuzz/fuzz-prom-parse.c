/* SPDX-License-Identifier: MIT */
/* The exposition parser and `joulestat top`'s model on any text: every sample it hands
 * over is well-formed, and no frame makes a power or an energy negative or not finite. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "prom_parse.h"
#include "top_model.h"

static int check_sample(const struct prom_sample *s, void *userdata) {
    (void)userdata;
    FUZZ_CHECK(memchr(s->name, '\0', sizeof(s->name)) != NULL && s->name[0]);
    FUZZ_CHECK(s->n_labels <= PROM_LABELS_MAX);
    for (size_t i = 0; i < s->n_labels; i++) {
        FUZZ_CHECK(memchr(s->labels[i].name, '\0', sizeof(s->labels[i].name)) != NULL);
        FUZZ_CHECK(memchr(s->labels[i].value, '\0', sizeof(s->labels[i].value)) != NULL);
    }
    return 0;
}

static void check_model(const struct top_model *m) {
    for (unsigned l = 0; l < _TOP_LEVEL_MAX; l++)
        for (size_t i = 0; i < m->levels[l].n; i++) {
            const struct top_row *r = &m->levels[l].rows[i];

            for (unsigned c = 0; c < _TOP_COMPONENT_MAX; c++) {
                FUZZ_CHECK(r->energy_j[c] >= 0 && isfinite(r->energy_j[c]));
                FUZZ_CHECK(!r->power_valid[c] || (r->power_w[c] >= 0 && !isnan(r->power_w[c])));
            }
            FUZZ_CHECK(!r->intensity_valid || !isnan(r->intensity_w));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    struct top_model m;
    size_t bad = 0;
    int n = prom_parse_text(text, size, check_sample, NULL, &bad);

    FUZZ_CHECK(n >= 0 && bad <= size);
    /* Two frames of the same text a second apart, then one a second later still. */
    top_model_init(&m);
    for (int t = 1; t <= 3; t++) {
        int r = top_model_update(&m, text, size, t);

        FUZZ_CHECK(r == 0 || r == -ENODATA || r == -ENOMEM);
        check_model(&m);
    }
    top_model_done(&m);
    return 0;
}

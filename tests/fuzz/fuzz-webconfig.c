/* SPDX-License-Identifier: MIT */
/* The web-config parser on any text: it loads or refuses with a message naming the file,
 * never crashes, and reads nothing but the text (file keys are refused here). */
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "webconfig.h"

#define FUZZ_PATH "/fuzz/web.yml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct web_config *c = NULL;
    char err[512];
    int r;

    memset(err, 'x', sizeof(err));
    r = web_config_parse(FUZZ_PATH, (const char *)data, size, false, &c, err, sizeof(err));
    FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
    FUZZ_CHECK(memchr(err, '\0', sizeof(err)) != NULL);
    if (r == -EINVAL)
        FUZZ_CHECK(strncmp(err, FUZZ_PATH ":", strlen(FUZZ_PATH) + 1) == 0);
    if (r < 0) {
        FUZZ_CHECK(c == NULL);
        return 0;
    }
    FUZZ_CHECK(c != NULL && err[0] == '\0');
    FUZZ_CHECK(web_config_tls_cert(c) == NULL); /* no file was read */
    /* A check against a loaded file never fails for a wrong password but refuses it;
     * the cost comes from the input, so only the remembered half runs here. */
    r = web_config_check_remembered(c, "user", "password");
    FUZZ_CHECK(r == 0 || r == -ENOENT || r == -ENOMEM);
    web_config_free(c);
    return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * tls_init() and the executable's gnutls_global_init() in front of the library's. Built
 * twice: with tests/fakes/fake_gnutls.c as "the library" (JOULESTAT_FAKE_GNUTLS), and
 * with no GnuTLS in the process at all.
 */
#include "testutil.h"

#include <errno.h>

#include "tls_init.h"
#ifdef JOULESTAT_FAKE_GNUTLS
#include "fake_gnutls.h"

/* Start-up calls (libmicrohttpd's constructor) are over by main(): every call now reaches
 * the library, and its failure is tls_init()'s -EIO. */
static void test_forwarded(void **state) {
    /* The load-time call was answered 0 and not forwarded: initialisation deferred. */
    assert_int_equal(fake_gnutls_startup_result, 0);
    assert_int_equal(fake_gnutls_calls, 0);

    fake_gnutls_result = 0;
    ASSERT_OK(tls_init());
    assert_int_equal(fake_gnutls_calls, 1);

    fake_gnutls_result = -50; /* GNUTLS_E_INVALID_REQUEST */
    ASSERT_ERRNO(tls_init(), EIO);
    assert_int_equal(fake_gnutls_calls, 2);
    /* Any later call gets the library's answer, not ours. */
    assert_int_equal(gnutls_global_init(), -50);
    assert_int_equal(fake_gnutls_calls, 3);
}
#else
int gnutls_global_init(void);

/* No GnuTLS: nothing to initialise a TLS listener with; a stray call still succeeds. */
static void test_no_gnutls(void **state) {
    ASSERT_ERRNO(tls_init(), EOPNOTSUPP);
    assert_int_equal(gnutls_global_init(), 0);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#ifdef JOULESTAT_FAKE_GNUTLS
        cmocka_unit_test(test_forwarded),
#else
        cmocka_unit_test(test_no_gnutls),
#endif
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

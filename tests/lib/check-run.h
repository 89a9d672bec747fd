/* The main() every Check unit test shares: run the suite in fork mode (so a
 * crash fails one test, not the program), honour CK_* environment settings,
 * and turn the result into an exit status. */
#pragma once

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        srunner_run_all(sr, CK_ENV);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

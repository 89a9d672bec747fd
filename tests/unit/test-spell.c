/* The distance behind "did you mean": edits, swaps, case, and the limit
 * that keeps a suggestion to a slip. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "util/macro.h"
#include "util/spell.h"
#include "../lib/check-run.h"

START_TEST(test_distance) {
        ck_assert_uint_eq(spell_distance("", ""), 0);
        ck_assert_uint_eq(spell_distance("", "abc"), 3);
        ck_assert_uint_eq(spell_distance("abc", ""), 3);
        ck_assert_uint_eq(spell_distance("token_file", "token_file"), 0);
        ck_assert_uint_eq(spell_distance("tokn_file", "token_file"), 1);   /* a letter left out */
        ck_assert_uint_eq(spell_distance("tokenn_file", "token_file"), 1); /* one too many */
        ck_assert_uint_eq(spell_distance("toekn_file", "token_file"), 1);  /* two swapped */
        ck_assert_uint_eq(spell_distance("tokan_file", "token_file"), 1);  /* one wrong */
        ck_assert_uint_eq(spell_distance("Token-File", "token_file"), 0);  /* case, '-' for '_' */
        ck_assert_uint_eq(spell_distance("kitten", "sitting"), 3);
        ck_assert_uint_eq(spell_distance("ca", "abc"), 3); /* OSA: no edit after a swap */
        ck_assert_uint_eq(spell_distance("sitting", "kitten"), 3);

        char long_word[SPELL_WORD_MAX + 2];
        memset(long_word, 'a', sizeof(long_word) - 1);
        long_word[sizeof(long_word) - 1] = '\0';
        ck_assert_uint_eq(spell_distance(long_word, "a"), SIZE_MAX);
        long_word[SPELL_WORD_MAX] = '\0';
        ck_assert_uint_eq(spell_distance(long_word, long_word), 0);
}
END_TEST

START_TEST(test_nearest) {
        static const char *const keys[] = {
                "socket", "socket_mode", "socket_group",    "state_dir",
                NULL,     "token_file",  "max_connections", "max_connections_per_uid"
        };

        ck_assert_str_eq(spell_nearest("tokn_file", keys, ELEMENTSOF(keys)), "token_file");
        ck_assert_str_eq(spell_nearest("TOKEN_FILE", keys, ELEMENTSOF(keys)), "token_file");
        ck_assert_str_eq(spell_nearest("socket_mod", keys, ELEMENTSOF(keys)), "socket_mode");
        ck_assert_str_eq(spell_nearest("max_conections", keys, ELEMENTSOF(keys)), "max_connections");
        /* the word itself is no suggestion; nothing near is none */
        ck_assert_ptr_null(spell_nearest("socket", keys, 1));
        ck_assert_ptr_null(spell_nearest("colour", keys, ELEMENTSOF(keys)));
        /* a short word: one edit at most */
        ck_assert_ptr_null(spell_nearest("sockx", (const char *const[]){ "socket" }, 1));
        ck_assert_str_eq(spell_nearest("sockt", (const char *const[]){ "socket" }, 1), "socket");
        /* at most three, however long (this one is four away) */
        ck_assert_ptr_null(spell_nearest("max_cnnctins_per_ud", keys, ELEMENTSOF(keys)));
        /* the nearest wins; ties go to the first */
        ck_assert_str_eq(spell_nearest("socket_grop", keys, ELEMENTSOF(keys)), "socket_group");
        ck_assert_str_eq(spell_nearest("ab", (const char *const[]){ "ac", "ad" }, 2), "ac");
        ck_assert_ptr_null(spell_nearest("x", (const char *const[]){ NULL }, 1));
}
END_TEST

int main(void) {
        Suite *s = suite_create("spell");
        TCase *tc = tcase_create("spell");

        tcase_add_test(tc, test_distance);
        tcase_add_test(tc, test_nearest);
        suite_add_tcase(s, tc);
        return check_run(s);
}

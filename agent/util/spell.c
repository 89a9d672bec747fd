/* Optimal string alignment distance: Levenshtein plus swapping two
 * neighbouring letters, the slip a hand makes most. */
#include <stdint.h>
#include <string.h>

#include "util/macro.h"
#include "util/spell.h"

static char fold(char c) {
        if (c >= 'A' && c <= 'Z')
                return (char) (c - 'A' + 'a');
        return c == '-' ? '_' : c;
}

size_t spell_distance(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        /* row i of the table in rows[i % 3]: a swap looks two rows back */
        size_t rows[3][SPELL_WORD_MAX + 1];

        if (la > SPELL_WORD_MAX || lb > SPELL_WORD_MAX)
                return SIZE_MAX;
        for (size_t j = 0; j <= lb; j++)
                rows[0][j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t *cur = rows[i % 3], *prev = rows[(i + 2) % 3], *prev2 = rows[(i + 1) % 3];

                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t d = MIN(prev[j] + 1, cur[j - 1] + 1);

                        d = MIN(d, prev[j - 1] + (fold(a[i - 1]) != fold(b[j - 1])));
                        if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                            fold(a[i - 2]) == fold(b[j - 1]))
                                d = MIN(d, prev2[j - 2] + 1);
                        cur[j] = d;
                }
        }
        return rows[la % 3][lb];
}

const char *spell_nearest(const char *word, const char *const *words, size_t n) {
        size_t len = strlen(word), limit = MIN((size_t) 3, MAX((size_t) 1, len / 3)), best_d = SIZE_MAX;
        const char *best = NULL;

        for (size_t i = 0; i < n; i++) {
                size_t d;

                if (!words[i] || streq(word, words[i]))
                        continue;
                d = spell_distance(word, words[i]);
                if (d > limit || d >= best_d)
                        continue;
                best_d = d;
                best = words[i];
        }
        return best;
}

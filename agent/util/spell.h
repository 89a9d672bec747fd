/* Spelling distance, for "did you mean" in the config readers: an unknown
 * key is answered with the nearest known one.  Non-logging, loop-free. */
#pragma once

#include <stddef.h>

/**
 * spell_distance() - the edits (insert, delete, substitute, swap two
 * neighbours) that turn @a into @b, ASCII case ignored; '-' and '_' count
 * as the same.  Words longer than SPELL_WORD_MAX are SIZE_MAX apart from
 * everything.
 */
#define SPELL_WORD_MAX 64
size_t spell_distance(const char *a, const char *b);

/**
 * spell_nearest() - of the @n words in @words (NULL entries skipped), the
 * one nearest @word, if near enough to be a slip: at most a third of
 * @word's length apart (one edit for short words, at most three), and
 * never @word itself (the same word in other case is).  Ties go to the first.  Return: it, or NULL.
 */
const char *spell_nearest(const char *word, const char *const *words, size_t n);

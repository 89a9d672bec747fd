/* sunkctl MODULE VERB KEY=VALUE...: the words after the verb as a call's
 * parameters. */
#pragma once

#include <stddef.h>

#include <json-c/json.h>

/**
 * params_parse() - @n words KEY=VALUE into a JSON object, *ret.
 *
 * KEY is [A-Za-z_][A-Za-z0-9_]*, each at most once.  VALUE true or false is
 * that boolean; a JSON number is a number (an integer must fit int64, a
 * fraction or exponent must be finite); a JSON string literal ("...") is that
 * string, so '"42"' sends the string 42; anything else is the string as
 * written, empty included.
 * Return: 0; -EINVAL with what is wrong in @err (@err_len bytes, the word
 * named, cut to a readable length); -ENOMEM.
 */
int params_parse(char *const *words, size_t n, json_object **ret, char *err, size_t err_len);

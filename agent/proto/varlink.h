/* Varlink message codec: NUL-terminated JSON objects.  Non-logging.
 *
 * Input comes from peers we do not trust, so the parser enforces the limits
 * itself: total size, nesting depth, valid UTF-8, no duplicate keys, one
 * object per frame.  The same code serves the daemon and the clients.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/**
 * varlink_parse() - parse one frame (without its NUL) of @len bytes.
 * Return: 0 with a JSON object in *ret; -EMSGSIZE (over @max_size), -EILSEQ
 * (not UTF-8 or contains NUL), -ELOOP (deeper than @max_depth), -ENOTUNIQ
 * (duplicate key), -EBADMSG (not JSON, or not an object).
 */
int varlink_parse(const char *buf, size_t len, size_t max_size, unsigned max_depth, json_object **ret);

/**
 * varlink_parse_call() - split a request into method and parameters.
 * Return: 0; *ret_method borrowed from @msg, *ret_params borrowed (an empty
 * object is substituted when absent); -EBADMSG on a missing or non-string
 * "method", non-object "parameters" or unknown top-level keys other than
 * "oneway", "more", "upgrade".
 */
int varlink_parse_call(json_object *msg, const char **ret_method, json_object **ret_params);

/** varlink_format() - serialise @msg with the trailing NUL; *ret_len counts it. */
int varlink_format(json_object *msg, char **ret, size_t *ret_len);

/**
 * varlink_method_name_is_valid() - "<interface>.<Method>": 1..255 bytes of
 * [A-Za-z0-9_-] in dot-separated, non-empty parts, at least two of them.
 */
bool varlink_method_name_is_valid(const char *s, size_t len);

/**
 * varlink_repair_utf8() - escape, in place, every string (value or key) in
 * @o that is not valid UTF-8, by the one rule for outside text
 * (util/text-escape.h).  The host's last defence for a reply a module
 * built from text it did not clean where it entered.
 * Return: how many strings were escaped, or -ENOMEM.
 */
int varlink_repair_utf8(json_object *o);

/* Attribute paths ("urn:...:CoreWeaveUser/sunkPosixUserId") looked up in
 * json-c objects.
 *
 * A page of 100 users looks up the same dozen paths a thousand times;
 * without a cache the extension's URN, 70 bytes, would be split off, copied
 * and hashed at every lookup.  A cache splits each path once and keeps each step's hash as
 * json-c's tables compute it, so a lookup is the table probe and one
 * compare.  Paths are cached by the address of their text, which must stay
 * put while the cache lives (the config's strings, literals).  Non-logging.
 */
#pragma once

struct json_object;

typedef struct AttrPaths AttrPaths;

/** attr_path_extract() - follow @path (slash-separated) through nested
 * objects.  Return: the value (borrowed), or NULL if @path is NULL or empty
 * or a step is missing, null or not an object. */
struct json_object *attr_path_extract(struct json_object *o, const char *path);

/** attr_paths_new() - an empty cache.  Return: 0 or -ENOMEM. */
int attr_paths_new(AttrPaths **ret);
AttrPaths *attr_paths_free(AttrPaths *c);

/** attr_paths_get() - attr_path_extract() through @c; the same answer for every object. */
struct json_object *attr_paths_get(AttrPaths *c, struct json_object *o, const char *path);

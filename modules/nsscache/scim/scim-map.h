/* SCIM 2.0 Resources to the mapper's entries (mapper.h).
 *
 * The mapper takes the Resources of each page (scim-page.h) as it arrives,
 * so memory holds one page of JSON plus what its sink keeps, never the
 * whole directory as JSON.  Non-logging.
 */
#pragma once

#include "mapper.h"

struct json_object;

/**
 * scim_map_add_users() / scim_map_add_groups() - map one page of Resources.
 * @resources: a JSON array (elements of other types become rejects).
 * Users feed passwd, shadow and sshkey (whichever are enabled); shadow and
 * sshkey entries exist only for users passwd validation accepted.
 * Return: 0, or -ENOMEM.  Bad entries are never errors: they are rejects.
 */
int scim_map_add_users(Mapper *m, struct json_object *resources);
int scim_map_add_groups(Mapper *m, struct json_object *resources);

/**
 * scim_map_extract() - follow a slash-separated path ("urn:...:User/attr")
 * through nested objects.  Return: the value (borrowed) or NULL if a step is
 * missing, null or not an object.
 */
struct json_object *scim_map_extract(struct json_object *o, const char *path);

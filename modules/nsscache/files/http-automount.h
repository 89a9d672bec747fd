/* The automount map from nsscache's http source: auto.master at
 * http_automount_base_url and the maps it names (http-automount.c).
 * Non-logging. */
#pragma once

#include "http-source.h"
#include "mapper.h"
#include "nsscache-conf.h"

/* The name auto.master's copy is kept under (http-automount in the state directory). */
#define NSS_MAP_AUTOMOUNT_COPY "automount"

/* Fetches @url into @ret (conditionally, against the copy kept as @name). */
typedef int (*http_automount_fetch_fn)(void *userdata, const char *name, const char *url, HttpBody *ret);

/** http_automount_resolve() - @rel against @base, as a browser (and Python's urljoin) does: an http or https
 * URL, malloc'ed.  Return: 0, -EINVAL, -ENOMEM. */
int http_automount_resolve(const char *base, const char *rel, char **ret);

/**
 * http_automount_fetch() - auto.master (BASE/auto.master) into
 * run->fetched[NSS_MAP_AUTOMOUNT], then each map one of its lines names
 * ("mountpoint location", the location resolved against BASE), once a
 * file, into run->am_*.  A line that names nothing fetchable is skipped
 * (and rejected when mapped).
 * Return: 0, what @fetch returned, -EFBIG for more than 1000 maps.
 */
int http_automount_fetch(const NsscacheConf *c, HttpSourceRun *run, http_automount_fetch_fn fetch,
                         void *userdata, char **ret_error);

/**
 * http_automount_map() - auto.master and its maps of @run into @m, as
 * nsscache's files cache writes them (auto.master's lines naming the maps'
 * files in files_dir).  A line that is not "key [options] location" is an
 * invalid-line; a mount point that would name no file of its own in
 * files_dir an invalid-name; one whose map is empty or was not fetched an
 * invalid-entry; a key (mount point, file) held twice costs both.
 * Return: 0 or -ENOMEM.
 */
int http_automount_map(const NsscacheConf *c, const HttpSourceRun *run, Mapper *m);

/* export_dir: the maps a producer published, for nodes to fetch.
 *
 * After a run that changed a map (or when export_dir has no manifest yet)
 * each published map is copied into export_dir under a content-addressed
 * name, MAP-SHA256HEX, with a gzip copy beside it (MAP-SHA256HEX.gz, for a
 * web server's gzip_static), then the generation kept in the state
 * directory is raised and written, and last the signed manifest naming the
 * files replaces export_dir/manifest by rename.  A web server serving the
 * directory at any moment serves one manifest and every file it names:
 * files are never rewritten in place, and those of the previous manifest
 * stay until the next one replaces it (a node that read it a moment ago
 * still finds them).  Runs on the worker; non-logging.
 */
#pragma once

#include <stdint.h>

#include <openssl/evp.h>

#include "cache/cache-publish.h"
#include "nsscache-conf.h"

#define EXPORT_MANIFEST "manifest"
#define EXPORT_GENERATION_FILE "export-generation"
#define EXPORT_KEY_MAX (16 * 1024)

/**
 * map_export_key_load() - the Ed25519 private key in the PEM file @path,
 * which must be owned by root (or sunkd's user) and readable by nobody else.
 * Return: 0, or negative errno with "'PATH': why" in *ret_error.
 */
int map_export_key_load(const char *path, EVP_PKEY **ret, char **ret_error);

/**
 * map_export() - export the maps @opts names after a publish that gave @report.
 * *@ret_generation: the manifest's generation, 0 when nothing needed export.
 * Return: 0 or negative errno with *ret_error naming the file; -EAGAIN when
 * a publish moved the maps while they were read (nothing was signed: try
 * again on the maps as they are now).
 */
int map_export(const NsscacheConf *c, const CacheOptions *opts, const CacheReport *report,
               uint64_t *ret_generation, char **ret_error);

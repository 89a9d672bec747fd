/* The baselines of the file system check types (check-genconf-fs.c), each
 * a HealthCheckType.genconf: `mount`, `disk_free` and `inodes_free` of the
 * node's persistent file systems. */
#pragma once

#include "health-check.h"

int check_genconf_fs_mount(const HealthEnv *env, HealthGenconf *out);
int check_genconf_fs_disk_free(const HealthEnv *env, HealthGenconf *out);
int check_genconf_fs_inodes_free(const HealthEnv *env, HealthGenconf *out);

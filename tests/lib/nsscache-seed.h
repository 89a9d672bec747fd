/* The attribute layout of the CoreWeave SCIM source in the SUNK guide's
 * nsscache.conf, shared by the unit tests and the fuzz targets.  [passwd]
 * comes last in every config built from these, so a test can append lines
 * to it. */
#pragma once

#define SEED_CW "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"

/* [group], [shadow] and [sshkey] as in the guide. */
#define SEED_OTHER_MAPS                                                                                     \
        "[group]\n"                                                                                         \
        "scim_path_gid=sunkPosixGroupId\n"                                                                  \
        "scim_path_groupname=sunkPosixGroupName\n"                                                          \
        "scim_path_username=members/sunkPosixUsername\n"                                                    \
        "[shadow]\n"                                                                                        \
        "scim_path_username=" SEED_CW "/sunkPosixUsername\n"                                                \
        "[sshkey]\n"                                                                                        \
        "scim_path_ssh_keys=" SEED_CW "/sunkSshKeys\n"                                                      \
        "scim_path_username=" SEED_CW "/sunkPosixUsername\n"

/* The [passwd] paths every test uses; callers add the header and extras. */
#define SEED_PASSWD_PATHS                                                                                   \
        "scim_path_gid=" SEED_CW "/sunkPosixGroupId\n"                                                      \
        "scim_path_login_shell=" SEED_CW "/sunkLoginShell\n"                                                \
        "scim_path_uid=" SEED_CW "/sunkPosixUserId\n"                                                       \
        "scim_path_username=" SEED_CW "/sunkPosixUsername\n"

/* sunkd.yaml: the daemon's own settings and the module sections.  Non-logging. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf-tree.h"

#define SUNKD_CONF_DEFAULT SUNKD_SYSCONFDIR "/sunkd/sunkd.yaml"
#define SUNKD_SOCKET_DEFAULT SUNKD_RUNSTATEDIR "/sunkd/io.sunkd"
#define SUNKD_STATE_DIR_DEFAULT SUNKD_LOCALSTATEDIR "/lib/sunkd"

typedef struct ConfModule {
        char *name;
        bool enabled;
        bool required;
        char **allow;      /* users and @groups for SUNKD_METHOD_ALLOW methods */
        uid_t *allow_uids; /* ... resolved when the file is loaded */
        size_t n_allow_uids;
        gid_t *allow_gids;
        size_t n_allow_gids;
        const ConfNode *cfg; /* borrowed from Config.tree */
} ConfModule;

typedef struct Config {
        ConfTree *tree;
        char *socket;
        char *socket_mode_str;
        mode_t socket_mode;
        char *socket_group;
        gid_t socket_gid; /* socket_group resolved; (gid_t)-1: leave */
        char *state_dir;
        char *module_dir;
        char *log_level_str;
        int log_level;
        char *metrics_textfile;
        int64_t max_connections;
        uint64_t max_request;
        uint64_t idle_timeout_usec;
        int64_t max_connections_per_uid;
        int64_t max_calls_per_uid;
        int64_t reserved_connections;
        uint64_t request_timeout_usec;
        uint64_t shutdown_timeout_usec;
        int64_t workers;
        const ConfNode *modules_node; /* borrowed from tree */
        ConfModule *modules;
        size_t n_modules;
} Config;

/**
 * config_load() - read and validate @path.  The file must pass
 * trusted_path_check(), and so must the paths sunkd writes (socket,
 * state_dir, metrics_textfile: SUNKD_CFG_WRITE_PATH).  Names (socket_group, allow
 * lists) are resolved through NSS here, which may go to the network: the
 * daemon calls this off the loop.  Module sections are checked for
 * shape (a mapping, enabled/required booleans) here; their own keys are the
 * modules' business.  Return: 0, or -EINVAL/-errno with *ret_error.
 */
int config_load(const char *path, Config **ret, char **ret_error);
/**
 * config_load_partial() - config_load(), and where the file's errors are in
 * its values (not its syntax, trust, module_dir, state_dir or modules), the
 * Config as far as it could be made (defaults for refused values) in *ret
 * beside the error, so that --check-config checks the module sections in
 * the same round.  *ret_error holds every error, one line each (so does
 * config_load()'s).
 */
int config_load_partial(const char *path, Config **ret, char **ret_error);
int config_parse(const char *file, const char *data, size_t len, Config **ret, char **ret_error);
Config *config_free(Config *c);
const ConfModule *config_find_module(const Config *c, const char *name);
/**
 * config_module_same() - whether a module sees @b as it saw @a: the same
 * keys and values (the host's enabled, required and allow aside, which the
 * module does not read) and the same files behind those it reads as part
 * of its configuration, as far as stat() tells (conf_node_note_file()).  A
 * reload leaves such a module alone.
 */
bool config_module_same(const ConfModule *a, const ConfModule *b);

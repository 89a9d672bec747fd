/* The reasons an entry is dropped, by the names logs and metrics give them. */
#include "map-reject.h"
#include "util/macro.h"

static const char *const reject_table[_MAP_REJECT_MAX] = {
        [MAP_REJECT_NOT_OBJECT] = "not-an-object",    [MAP_REJECT_NO_NAME] = "missing-name",
        [MAP_REJECT_BAD_NAME] = "invalid-name",       [MAP_REJECT_NO_ID] = "missing-id",
        [MAP_REJECT_BAD_ID] = "invalid-id",           [MAP_REJECT_ID_RANGE] = "id-out-of-range",
        [MAP_REJECT_BAD_HOME] = "invalid-home",       [MAP_REJECT_BAD_SHELL] = "invalid-shell",
        [MAP_REJECT_DUP_NAME] = "duplicate-name",     [MAP_REJECT_DUP_ID] = "duplicate-id",
        [MAP_REJECT_BAD_MEMBER] = "invalid-member",   [MAP_REJECT_BAD_SSHKEY] = "invalid-sshkey",
        [MAP_REJECT_NAME_MISMATCH] = "name-mismatch", [MAP_REJECT_TOO_MANY] = "too-many-values",
        [MAP_REJECT_LOCAL_ACCOUNT] = "local-account", [MAP_REJECT_BAD_ENTRY] = "invalid-entry",
        [MAP_REJECT_BAD_LINE] = "invalid-line",
};

const char *map_reject_reason_to_string(MapRejectReason r) {
        if ((int) r < 0 || r >= _MAP_REJECT_MAX)
                return NULL;
        return reject_table[r];
}

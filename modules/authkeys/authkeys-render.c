/* What sunkctl knows of the authkeys module: its interface is named for
 * sshd's AuthorizedKeysCommand (io.sunkd.AuthorizedKeys), not for the
 * module, so `sunkctl authkeys get user=NAME` needs this view to find it;
 * the answers are shown by the generic renderer.  Linked into sunkctl as
 * sunkctl_view_authkeys. */
#include "client/sunkctl-view.h"

static const SunkctlMethodView methods[] = {
        {},
};

const SunkctlView sunkctl_view_authkeys = {
        .module = "authkeys",
        .interface = "AuthorizedKeys",
        .methods = methods,
};

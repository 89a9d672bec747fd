/* A module that claims the next major ABI: the loader must refuse it. */
#include "sunkd/module.h"

static int init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret) {
        return 0;
}
static void fini(void *s) {
}

SUNKD_EXPORT extern const sunkd_module sunkd_module_v1;
SUNKD_EXPORT const sunkd_module sunkd_module_v1 = {
        .abi_major = SUNKD_MODULE_ABI_MAJOR + 1,
        .abi_minor = 0,
        .size = sizeof(sunkd_module),
        .name = "badabi",
        .version = PACKAGE_VERSION,
        .init = init,
        .fini = fini,
};

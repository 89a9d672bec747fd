/* The `dmi` check: one DMI (SMBIOS) field of the node, as the kernel
 * shows it in <root>/sys/class/dmi/id/<field> (bios_version, bios_vendor,
 * bios_date, board_name, product_name, sys_vendor, ...), equals `value`
 * or matches the POSIX extended regular expression `match`; with `negate`
 * it must not.  This is LBNL NHC's check_dmi_data_match, read from sysfs
 * rather than dmidecode's output: NHC matches any line of the DMI table
 * ("BIOS Information: Version: 2.1.3"), of a handle or type, where sunkd
 * names the field, whose value is the same string (no dmidecode, no
 * root-only /dev/mem).  A field the kernel does not show (no SMBIOS table,
 * a VM, an arm64 board without one) is UNKNOWN "dmi-input-missing"; NHC
 * fails its check when dmidecode gives no handles.  The regex is compiled
 * with the config, as the file check's is. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-sysfs.h"

#define DMI_ID "/sys/class/dmi/id"
#define DMI_FIELD_MAX 64

typedef struct DmiConf {
        HealthCheckCommon common;
        char *field;
        char *value;
        char *match;
        bool negate;
        /* from validate */
        regex_t re;
        bool compiled;
} DmiConf;

static const sunkd_cfg_key dmi_keys[] = {
        HEALTH_COMMON_KEYS,
        { "field", SUNKD_CFG_STRING, offsetof(DmiConf, field), SUNKD_CFG_REQUIRED, 0, 0 },
        { "value", SUNKD_CFG_STRING, offsetof(DmiConf, value), 0, 0, 0 },
        { "match", SUNKD_CFG_STRING, offsetof(DmiConf, match), 0, 0, 0 },
        { "negate", SUNKD_CFG_BOOL, offsetof(DmiConf, negate), 0, 0, 0 },
};

static int dmi_validate(void *conf, char **ret_error) {
        DmiConf *c = conf;
        int r;

        if (strlen(c->field) >= DMI_FIELD_MAX ||
            strspn(c->field, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(c->field) ||
            isempty(c->field))
                return check_invalid(ret_error, "field",
                                     "'%s' is not a field of /sys/class/dmi/id such as bios_version",
                                     c->field);
        if (!c->value == !c->match)
                return check_invalid(ret_error, c->value ? "match" : "value",
                                     "a dmi check needs value or match, not both");
        if (!c->match)
                return 0;
        r = check_regcomp(&c->re, "match", c->match, REG_NOSUB, ret_error);
        if (r < 0)
                return r;
        c->compiled = true;
        return 0;
}

static void dmi_release(void *conf) {
        DmiConf *c = conf;

        if (c->compiled)
                regfree(&c->re);
        c->compiled = false;
}

static int dmi_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const DmiConf *c = conf;
        _cleanup_free_ char *v = NULL;
        char rel[CHECK_PATH_MAX];
        bool hit;
        int r;

        snprintf(rel, sizeof(rel), DMI_ID "/%s", c->field);
        r = check_sysfs_read(env, "dmi", rel, CHECK_SYSFS_MAX, &v, ret);
        if (r <= 0)
                return r;
        hit = c->compiled ? regexec(&c->re, v, 0, NULL, 0) == 0 : streq(v, c->value);
        if (hit == c->negate)
                health_result_set(ret, HEALTH_FAIL, "dmi-mismatch", "%s is '%s', %s '%s'", c->field, v,
                                  c->negate ? (c->compiled ? "which must not match" : "which must not be")
                                            : (c->compiled ? "want a match of" : "want"),
                                  c->compiled ? c->match : c->value);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "%s is '%s'", c->field, v);
        return 0;
}

/* The fields a baseline pins: what a firmware update or a swapped board changes. */
static const char *const dmi_genconf_fields[] = { "bios_version", "product_name" };

static int dmi_genconf(const HealthEnv *env, HealthGenconf *out) {
        for (size_t i = 0; i < ELEMENTSOF(dmi_genconf_fields); i++) {
                _cleanup_free_ char *v = NULL;
                char rel[CHECK_PATH_MAX], q[2 * CHECK_SYSFS_MAX];
                int r;

                snprintf(rel, sizeof(rel), DMI_ID "/%s", dmi_genconf_fields[i]);
                r = check_sysfs_value(env, rel, CHECK_SYSFS_MAX, &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || isempty(v) || !check_genconf_text_ok(v) ||
                    !health_genconf_quote(v, q, sizeof(q)))
                        continue; /* not shown, or nothing YAML can hold */
                r = health_genconf_add(out, "{name: dmi-%s, type: dmi, field: %s, value: %s}",
                                       dmi_genconf_fields[i], dmi_genconf_fields[i], q);
                if (r < 0)
                        return r;
        }
        return 0;
}

const HealthCheckType health_check_dmi = {
        .name = "dmi",
        .keys = dmi_keys,
        .n_keys = ELEMENTSOF(dmi_keys),
        .conf_size = sizeof(DmiConf),
        .validate = dmi_validate,
        .release = dmi_release,
        .run = dmi_run,
        .genconf = dmi_genconf,
        .child = false,
};

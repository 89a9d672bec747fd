/* Fuzz target: nsscache.conf from untrusted bytes.  The INI reader must give
 * entries or a located error, never a crash, a leak or a value past
 * INI_VALUE_MAX (interpolation cannot blow up); the same bytes then go
 * through nsscache's key table and finalize. */
#include <stdint.h>
#include <string.h>

#include "modules/nsscache/ini.h"
#include "modules/nsscache/nsscache-conf.h"
#include "util/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reader(const uint8_t *data, size_t size) {
        _cleanup_(ini_file_done) IniFile f = { .fname = "fuzz.conf" };
        _cleanup_free_ char *err = NULL;

        if (ini_read(&f, (const char *) data, size, NULL, &err) < 0) {
                if (!err || !strstr(err, "fuzz.conf"))
                        __builtin_trap(); /* every error names the file */
                return;
        }
        for (size_t i = 0; i < f.n; i++) {
                _cleanup_free_ char *e = NULL;
                char *v = NULL;

                if (ini_lookup(&f, f.entries[i].section, f.entries[i].key) == NULL)
                        __builtin_trap();
                if (ini_value(&f, &f.entries[i], &v, &e) < 0)
                        continue;
                if (strlen(v) >= INI_VALUE_MAX)
                        __builtin_trap();
                erase_and_free(v);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(nsscache_conf_freep) NsscacheConf *c = NULL;
        _cleanup_free_ char *err = NULL;

        reader(data, size);
        if (nsscache_conf_new(&c) < 0)
                __builtin_trap();
        if (nsscache_conf_parse_ini(c, (const char *) data, size, "fuzz.conf", &err) >= 0)
                (void) nsscache_conf_finalize(c, &err);
        return 0;
}

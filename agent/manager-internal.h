/* What manager.c (the lifecycle) and manager-reload.c (a reload) share.
 * Nothing else includes this; the rest of the daemon has manager.h. */
#pragma once

#include "manager.h"
#include "module-loader.h"

/* A caller of manager_reload() waiting for its end. */
struct ReloadWait {
        ManagerReloadFn fn;
        void *userdata;
        ReloadWait *next;
};

/* manager.c */
void manager_check_stopped(Manager *m);
void manager_write_textfile(Manager *m);
int manager_add_module(Manager *m, Module *mod);
void manager_module_metric(Manager *m, Module *mod);

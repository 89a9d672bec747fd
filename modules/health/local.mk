# modules/health/: node health checks that drain and resume the node in slurmctld.

# The built-in check types, the rules of draining, the scontrol parser,
# slurmrestd's JSON and the JWT minting: a convenience library the module
# and its tests link; the consumer links agent/libsunkd-util.la itself.
noinst_LTLIBRARIES += %reldir%/libhealth.la
%canon_reldir%_libhealth_la_SOURCES = \
	%reldir%/checks/health-check.c \
	%reldir%/checks/health-check.h \
	%reldir%/checks/health-code.c \
	%reldir%/checks/health-code.h \
	%reldir%/checks/health-genconf.c \
	%reldir%/checks/health-genconf.h \
	%reldir%/checks/check-util.c \
	%reldir%/checks/check-util.h \
	%reldir%/checks/check-mountinfo.c \
	%reldir%/checks/check-mountinfo.h \
	%reldir%/checks/check-mount.c \
	%reldir%/checks/check-disk-free.c \
	%reldir%/checks/check-inodes-free.c \
	%reldir%/checks/check-memory.c \
	%reldir%/checks/check-process.c \
	%reldir%/checks/check-file.c \
	%reldir%/checks/check-load.c \
	%reldir%/checks/check-ib.c \
	%reldir%/checks/check-munge.c \
	%reldir%/checks/check-proc.c \
	%reldir%/checks/check-proc.h \
	%reldir%/checks/check-process-limit.c \
	%reldir%/checks/check-user-processes.c \
	%reldir%/checks/check-tcp-port.c \
	%reldir%/checks/check-command.c \
	%reldir%/checks/check-genconf.h \
	%reldir%/checks/check-genconf-fs.c \
	%reldir%/checks/check-sysfs.c \
	%reldir%/checks/check-sysfs.h \
	%reldir%/checks/check-cpu.c \
	%reldir%/checks/check-dmi.c \
	%reldir%/checks/check-edac.c \
	%reldir%/checks/check-mce.c \
	%reldir%/checks/check-ethernet.c \
	%reldir%/transport/health-jwt.c \
	%reldir%/transport/health-jwt.h \
	%reldir%/health-signal.c \
	%reldir%/health-signal.h \
	%reldir%/health-node.c \
	%reldir%/health-node.h \
	%reldir%/health-count.c \
	%reldir%/health-count.h \
	%reldir%/health-gpu.c \
	%reldir%/health-gpu.h \
	%reldir%/health-gpu-memory.c \
	%reldir%/health-gpu-memory.h \
	%reldir%/checks/health-gpu-limits.c \
	%reldir%/checks/health-gpu-limits.h \
	%reldir%/health-xid-policy.c \
	%reldir%/health-xid-policy.h \
	%reldir%/transport/health-restjson.c \
	%reldir%/transport/health-restjson.h \
	# End of libhealth_la_SOURCES
%canon_reldir%_libhealth_la_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/%reldir% $(CRYPTO_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libhealth_la_LIBADD = $(MUNGE_LIBS) $(CRYPTO_LIBS) $(JSONC_LIBS)

pkglib_LTLIBRARIES += %reldir%/health.la
%canon_reldir%_health_la_SOURCES = \
	%reldir%/health.c \
	%reldir%/health-state.h \
	%reldir%/health-settings.c \
	%reldir%/health-check-jobs.c \
	%reldir%/health-gpucheck.c \
	%reldir%/health-judge.c \
	%reldir%/health-repair.c \
	%reldir%/transport/health-scontrol.c \
	%reldir%/transport/health-libslurm.c \
	%reldir%/transport/health-libslurm.h \
	%reldir%/transport/health-rest.c \
	%reldir%/health-store.c \
	%reldir%/health-methods.c \
	%reldir%/health-genconf-job.c \
	# End of health_la_SOURCES
%canon_reldir%_health_la_CFLAGS = $(AM_CFLAGS) -I$(srcdir)/%reldir% $(JSONC_CFLAGS) $(SLURM_CFLAGS) $(CURL_CFLAGS)
%canon_reldir%_health_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_health_la_LIBADD = %reldir%/libhealth.la agent/libsunkd-util.la $(JSONC_LIBS) $(SLURM_LIBS) $(CURL_LIBS)

# sunkctl's view of the module's answers (client/sunkctl-view.h), linked
# into sunkctl, which lists it in its generated table.
SUNKCTL_VIEWS += health
SUNKCTL_VIEW_SOURCES += %reldir%/health-render.c

# End of modules/health/local.mk

# modules/gres/: GPU discovery and Slurm gres.conf / Gres= rendering.

# Discovery and rendering: a convenience library the module and its tests
# link; the consumer links agent/libsunkd-util.la (strbuf, strv) itself.
noinst_LTLIBRARIES += %reldir%/libgres.la
%canon_reldir%_libgres_la_SOURCES = \
	%reldir%/nvml-api.h \
	%reldir%/gres-gpu.c \
	%reldir%/gres-gpu.h \
	%reldir%/gres-health.c \
	%reldir%/gres-health.h \
	%reldir%/gres-xid.c \
	%reldir%/gres-xid.h \
	%reldir%/gres-kmsg.c \
	%reldir%/gres-kmsg.h \
	%reldir%/gres-conf.c \
	%reldir%/gres-conf.h \
	%reldir%/gres-proc.c \
	%reldir%/gres-proc.h \
	%reldir%/gres-nvml.c \
	%reldir%/gres-nvml.h \
	%reldir%/gres-check.c \
	%reldir%/gres-check.h \
	%reldir%/gres-topo.c \
	%reldir%/gres-topo.h \
	# End of libgres_la_SOURCES
%canon_reldir%_libgres_la_CFLAGS = $(AM_CFLAGS) $(SLURM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libgres_la_LIBADD = $(SLURM_LIBS) $(JSONC_LIBS)

pkglib_LTLIBRARIES += %reldir%/gres.la
%canon_reldir%_gres_la_SOURCES = \
	%reldir%/gres.c \
	%reldir%/gres-state.h \
	%reldir%/gres-list.c \
	%reldir%/gres-discover.c \
	%reldir%/gres-events.c \
	%reldir%/gres-kmsg-job.c \
	%reldir%/gres-xid-store.c \
	%reldir%/gres-publish.c \
	%reldir%/gres-settings.c \
	%reldir%/gres-wait.c \
	%reldir%/gres-wait.h \
	# End of gres_la_SOURCES
%canon_reldir%_gres_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_gres_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_gres_la_LIBADD = %reldir%/libgres.la agent/libsunkd-util.la $(JSONC_LIBS) $(SLURM_LIBS) -ldl


# sunkctl's view of the module's answers (client/sunkctl-view.h), linked
# into sunkctl, which lists it in its generated table.
SUNKCTL_VIEWS += gres
SUNKCTL_VIEW_SOURCES += %reldir%/gres-render.c

# End of modules/gres/local.mk

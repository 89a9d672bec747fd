# modules/prolog/: prolog and epilog directories for slurmd.

# The directory scan, its filter and permission checks, and the client's own
# run of a script: one library the module and the client both link, so both
# apply the same rules.  It needs agent/libsunkd-util.la (the consumer links
# it) and nothing else of the daemon.
noinst_LTLIBRARIES += %reldir%/libprolog.la
%canon_reldir%_libprolog_la_SOURCES = \
	%reldir%/prolog-dir.c \
	%reldir%/prolog-dir.h \
	%reldir%/prolog-environ.c \
	%reldir%/prolog-environ.h \
	%reldir%/prolog-exec.c \
	%reldir%/prolog-exec.h \
	%reldir%/prolog-local.c \
	%reldir%/prolog-local.h \
	%reldir%/prolog-reason.c \
	%reldir%/prolog-reason.h \
	%reldir%/prolog-settings.c \
	%reldir%/prolog-settings.h \
	# End of libprolog_la_SOURCES
%canon_reldir%_libprolog_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libprolog_la_LIBADD = agent/libsunkd-util.la $(JSONC_LIBS) -lresolv

pkglib_LTLIBRARIES += %reldir%/prolog.la
%canon_reldir%_prolog_la_SOURCES = \
	%reldir%/prolog.c \
	%reldir%/prolog-state.h \
	%reldir%/prolog-conf.c \
	%reldir%/prolog-run.c \
	%reldir%/prolog-history.c \
	# End of prolog_la_SOURCES
%canon_reldir%_prolog_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_prolog_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_prolog_la_LIBADD = %reldir%/libprolog.la $(JSONC_LIBS)

# slurmd's Prolog= and Epilog=: one program, two names.  The socket client
# and libprolog only (no libcurl, libyaml, libsystemd).
pkglibexec_PROGRAMS += %reldir%/sunkd-prolog
%canon_reldir%_sunkd_prolog_SOURCES = %reldir%/sunkd-prolog.c
%canon_reldir%_sunkd_prolog_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkd_prolog_LDADD = agent/client/libsunkd-client.la %reldir%/libprolog.la $(JSONC_LIBS)

# The second name, in the build tree for the tests and where it is installed.
noinst_SCRIPTS += %reldir%/sunkd-epilog
CLEANFILES += %reldir%/sunkd-epilog
%reldir%/sunkd-epilog: %reldir%/sunkd-prolog$(EXEEXT)
	$(AM_V_GEN)ln -sf sunkd-prolog $@
INSTALL_EXEC_HOOKS += install-sunkd-epilog
UNINSTALL_HOOKS += uninstall-sunkd-epilog
install-sunkd-epilog:
	ln -sf sunkd-prolog $(DESTDIR)$(pkglibexecdir)/sunkd-epilog
uninstall-sunkd-epilog:
	rm -f $(DESTDIR)$(pkglibexecdir)/sunkd-epilog

# sunkctl's view of the module's answers (client/sunkctl-view.h), linked
# into sunkctl, which lists it in its generated table.
SUNKCTL_VIEWS += prolog
SUNKCTL_VIEW_SOURCES += %reldir%/prolog-render.c

# End of modules/prolog/local.mk

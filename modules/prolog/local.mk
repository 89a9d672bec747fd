# modules/prolog/: prolog and epilog directories for slurmd.

# The directory scan, its filter and permission checks, a script's
# environment, the settings file and the reason text: one library the module
# and the client both link, so both apply the same rules.  It needs
# agent/libsunkd-util.la (the consumer links it) and nothing else of the
# daemon.  Nothing in it forks.
noinst_LTLIBRARIES += %reldir%/libprolog.la
%canon_reldir%_libprolog_la_SOURCES = \
	%reldir%/prolog-dir.c \
	%reldir%/prolog-dir.h \
	%reldir%/prolog-environ.c \
	%reldir%/prolog-environ.h \
	%reldir%/prolog-reason.c \
	%reldir%/prolog-reason.h \
	%reldir%/prolog-script.c \
	%reldir%/prolog-script.h \
	%reldir%/prolog-select.c \
	%reldir%/prolog-select.h \
	%reldir%/prolog-settings.c \
	%reldir%/prolog-settings.h \
	# End of libprolog_la_SOURCES
%canon_reldir%_libprolog_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_libprolog_la_LIBADD = agent/libsunkd-util.la $(JSONC_LIBS) -lresolv

# The client's own run of a script (fork, execveat(), poll) and of a whole
# directory: the client links it, the module never does (modules never fork),
# so prolog.so holds no fork or exec.  It needs libprolog.la, linked after it.
noinst_LTLIBRARIES += %reldir%/libprolog-exec.la
%canon_reldir%_libprolog_exec_la_SOURCES = \
	%reldir%/prolog-exec.c \
	%reldir%/prolog-exec.h \
	%reldir%/prolog-local.c \
	%reldir%/prolog-local.h \
	# End of libprolog_exec_la_SOURCES
%canon_reldir%_libprolog_exec_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)

pkglib_LTLIBRARIES += %reldir%/prolog.la
%canon_reldir%_prolog_la_SOURCES = \
	%reldir%/prolog.c \
	%reldir%/prolog-state.h \
	%reldir%/prolog-conf.c \
	%reldir%/prolog-run.c \
	%reldir%/prolog-history.c \
	%reldir%/prolog-list.c \
	# End of prolog_la_SOURCES
%canon_reldir%_prolog_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_prolog_la_LDFLAGS = $(MODULE_LINK_FLAGS)
%canon_reldir%_prolog_la_LIBADD = %reldir%/libprolog.la $(JSONC_LIBS)

# slurmd's Prolog= and Epilog=: one program, two names.  The socket client
# libprolog-exec and libprolog only (no libcurl, libyaml, libsystemd).
pkglibexec_PROGRAMS += %reldir%/sunkd-prolog
%canon_reldir%_sunkd_prolog_SOURCES = %reldir%/sunkd-prolog.c
%canon_reldir%_sunkd_prolog_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_sunkd_prolog_LDADD = agent/client/libsunkd-client.la %reldir%/libprolog-exec.la %reldir%/libprolog.la $(JSONC_LIBS)

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

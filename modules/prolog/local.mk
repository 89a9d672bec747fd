# modules/prolog/: prolog and epilog directories for slurmd.

# The directory scan, its filter and permission checks, and the client's own
# run of a script: one library the module and the client both link, so both
# apply the same rules.  It needs agent/libsunkd-util.la (the consumer links
# it) and nothing else of the daemon.
noinst_LTLIBRARIES += %reldir%/libprolog.la
%canon_reldir%_libprolog_la_SOURCES = \
	%reldir%/prolog-dir.c \
	%reldir%/prolog-dir.h \
	%reldir%/prolog-exec.c \
	%reldir%/prolog-exec.h \
	# End of libprolog_la_SOURCES

# End of modules/prolog/local.mk

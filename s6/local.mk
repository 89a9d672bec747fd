# s6/: the service directory for s6 and s6-rc (s6-overlay), installed under
# $(pkgdatadir)/s6/sunkd with the configured paths in its run script.

s6dir = $(pkgdatadir)/s6
dist_s6_DATA = %reldir%/README.md

s6servicedir = $(s6dir)/sunkd
s6service_SCRIPTS = %reldir%/sunkd/run
dist_s6service_SCRIPTS = %reldir%/sunkd/finish
dist_s6service_DATA = %reldir%/sunkd/type %reldir%/sunkd/notification-fd

s6servicedepsdir = $(s6servicedir)/dependencies.d
dist_s6servicedeps_DATA = %reldir%/sunkd/dependencies.d/base

EXTRA_DIST += %reldir%/sunkd/run.in
CLEANFILES += %reldir%/sunkd/run

%reldir%/sunkd/run: $(top_srcdir)/%reldir%/sunkd/run.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && \
		chmod +x $@.tmp && mv $@.tmp $@

# End of s6/local.mk

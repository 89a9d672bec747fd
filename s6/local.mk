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

# s6-overlay v3: an s6-rc.d source tree for /etc/s6-overlay/s6-rc.d of a
# slurmd image.  sunkd is the service directory above with a dependency on
# munge; munge and an example slurmd that starts once sunkd is ready come
# with it, and the user bundle's contents.d names all three.
s6rcdir = $(pkgdatadir)/s6-overlay/s6-rc.d
s6rcsunkddir = $(s6rcdir)/sunkd
s6rcsunkd_SCRIPTS = %reldir%/sunkd/run
nodist_s6rcsunkd_SCRIPTS = %reldir%/sunkd/finish
nodist_s6rcsunkd_DATA = %reldir%/sunkd/type %reldir%/sunkd/notification-fd
s6rcsunkddepsdir = $(s6rcsunkddir)/dependencies.d
nodist_s6rcsunkddeps_DATA = %reldir%/sunkd/dependencies.d/base
dist_s6rcsunkddeps_DATA = %reldir%/s6-rc.d/sunkd/dependencies.d/munge

s6rcmungedir = $(s6rcdir)/munge
dist_s6rcmunge_SCRIPTS = %reldir%/s6-rc.d/munge/run
dist_s6rcmunge_DATA = %reldir%/s6-rc.d/munge/type %reldir%/s6-rc.d/munge/notification-fd
s6rcmungedatadir = $(s6rcmungedir)/data
dist_s6rcmungedata_SCRIPTS = %reldir%/s6-rc.d/munge/data/check
s6rcmungedepsdir = $(s6rcmungedir)/dependencies.d
dist_s6rcmungedeps_DATA = %reldir%/s6-rc.d/munge/dependencies.d/base

s6rcslurmddir = $(s6rcdir)/slurmd
s6rcslurmd_SCRIPTS = %reldir%/s6-rc.d/slurmd/run
dist_s6rcslurmd_DATA = %reldir%/s6-rc.d/slurmd/type
s6rcslurmddepsdir = $(s6rcslurmddir)/dependencies.d
dist_s6rcslurmddeps_DATA = %reldir%/s6-rc.d/slurmd/dependencies.d/base \
	%reldir%/s6-rc.d/slurmd/dependencies.d/munge %reldir%/s6-rc.d/slurmd/dependencies.d/sunkd

s6rcuserdir = $(s6rcdir)/user/contents.d
dist_s6rcuser_DATA = %reldir%/s6-rc.d/user/contents.d/munge %reldir%/s6-rc.d/user/contents.d/sunkd \
	%reldir%/s6-rc.d/user/contents.d/slurmd

EXTRA_DIST += %reldir%/s6-rc.d/slurmd/run.in
CLEANFILES += %reldir%/s6-rc.d/slurmd/run

%reldir%/s6-rc.d/slurmd/run: $(top_srcdir)/%reldir%/s6-rc.d/slurmd/run.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && \
		chmod +x $@.tmp && mv $@.tmp $@

# End of s6/local.mk

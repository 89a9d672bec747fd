# systemd/: the service and socket units, the prolog module's drop-in and the
# tmpfiles.d snippet for the state directory, with the configured paths
# filled in.

systemdsystemunit_DATA = %reldir%/sunkd.service %reldir%/sunkd.socket
prologdropindir = $(systemdsystemunitdir)/sunkd.service.d
prologdropin_DATA = %reldir%/prolog.conf
tmpfiles_DATA = %reldir%/sunkd.conf
SYSTEMD_FILES = %reldir%/sunkd.service %reldir%/sunkd.socket %reldir%/prolog.conf %reldir%/sunkd.conf
EXTRA_DIST += %reldir%/sunkd.service.in %reldir%/sunkd.socket.in %reldir%/prolog.conf.in %reldir%/sunkd.tmpfiles.in
CLEANFILES += $(SYSTEMD_FILES)

%reldir%/sunkd.service: $(top_srcdir)/%reldir%/sunkd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@
%reldir%/sunkd.socket: $(top_srcdir)/%reldir%/sunkd.socket.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@
%reldir%/prolog.conf: $(top_srcdir)/%reldir%/prolog.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@

%reldir%/sunkd.conf: $(top_srcdir)/%reldir%/sunkd.tmpfiles.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/%reldir%/sunkd.tmpfiles.in > $@.tmp && mv $@.tmp $@

# End of systemd/local.mk

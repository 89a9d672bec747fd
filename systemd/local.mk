# systemd/: the service unit, with the configured paths filled in.

systemdsystemunit_DATA = %reldir%/sunkd.service
EXTRA_DIST += %reldir%/sunkd.service.in
CLEANFILES += %reldir%/sunkd.service

%reldir%/sunkd.service: $(top_srcdir)/%reldir%/sunkd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@

# End of systemd/local.mk

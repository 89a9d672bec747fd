# man/: the pages, with the configured paths filled in.

SUNKD_MAN_PAGES = %reldir%/sunkd.8 %reldir%/sunkctl.1 %reldir%/sunkd.yaml.5 %reldir%/sunkd-authkeys.8 \
	%reldir%/sunkd-prolog.8
man_MANS += $(SUNKD_MAN_PAGES)
EXTRA_DIST += $(SUNKD_MAN_PAGES:=.in)
CLEANFILES += $(SUNKD_MAN_PAGES)

$(SUNKD_MAN_PAGES): %: $(top_srcdir)/%.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && $(SUBST_PATHS) < $(top_srcdir)/$@.in > $@.tmp && mv $@.tmp $@

# End of man/local.mk

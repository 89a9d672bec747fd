# modules/gres/: GPU discovery and Slurm gres.conf / Gres= rendering.

# Discovery and rendering: a convenience library the module and its tests
# link; the consumer links agent/libsunkd-util.la (strbuf, strv) itself.
noinst_LTLIBRARIES += %reldir%/libgres.la
%canon_reldir%_libgres_la_SOURCES = \
	%reldir%/nvml-api.h \
	%reldir%/gres-gpu.c \
	%reldir%/gres-gpu.h \
	%reldir%/gres-conf.c \
	%reldir%/gres-conf.h \
	%reldir%/gres-proc.c \
	%reldir%/gres-proc.h \
	%reldir%/gres-nvml.c \
	%reldir%/gres-nvml.h \
	# End of libgres_la_SOURCES


# End of modules/gres/local.mk

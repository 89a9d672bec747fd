# The tests that need a real NVIDIA GPU and its driver, and the set-up of
# those on the fake NVML (sourced after tap.sh).
#
# gpu_or_skip WHAT         report the test skipped ("1..0 # SKIP"), saying WHAT needs a
#                          GPU, unless nvidia-smi lists one: no GPU can be faked into the
#                          real libnvidia-ml.so.1, so these are the suite's only skips
# gpu_setup MODULE...      source sunkd.sh, sunkd_setup, copy each MODULE.so into $MODDIR
# gpu_health_config [YAML] sunkd_config: gres on the real NVML and the health module's
#                          gpu check, both hourly; YAML: more modules
# gpu_fake_node_setup      for a test on the fake NVML and a real Slurm (slurm.sh sourced):
#                          gpu_setup gres health, slurm_setup, $NVML the fake NVML, $T/root
#                          a fake root with a boot id

gpu_or_skip() {
        if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
                echo "1..0 # SKIP no NVIDIA GPU here (nvidia-smi is missing or finds none): $1 needs one"
                exit 0
        fi
}

gpu_setup() {
        . "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
        sunkd_setup
        for m in "$@"; do
                cp "$SUNKD_BUILDDIR/modules/$m/.libs/$m.so" "$MODDIR/" || bail_out "$m.so not built"
        done
}

gpu_health_config() {
        : > "$T/slurm.conf"
        sunkd_config "modules:
  gres:
    backend: nvml
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    interval: 1h
  health:
    transport: none
    interval: 1h
    checks:
      - name: gpu
        type: gpu${1:+
$1}"
}

gpu_fake_node_setup() {
        gpu_setup gres health
        slurm_setup
        NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
        [ -f "$NVML" ] || bail_out "the fake NVML is not built"
        mkdir -p "$T/root/proc/sys/kernel/random" &&
                echo 0d9c1f2e-aaaa-4bbb-8ccc-0123456789ab > "$T/root/proc/sys/kernel/random/boot_id" ||
                bail_out "cannot give the fake root a boot id"
}

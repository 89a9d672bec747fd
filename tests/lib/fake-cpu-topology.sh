#!/bin/sh
# fake-cpu-topology.sh ROOT SOCKETS CORES THREADS [interleaved]
#
# Writes the CPU topology of a node under ROOT/sys/devices/system/cpu the way
# Linux lays it out: thread t of core c on socket s is CPU t*S*C + s*C + c
# (all first threads, then all second ones), or with "interleaved" CPU
# t*S*C + c*S + s (sockets alternate, as some firmware numbers them).  Core
# ids have gaps, as real ones do.  Beside the CPUs: the entries that are not
# CPUs (online, cpufreq/), which readers must step over.
set -eu
root=$1 sockets=$2 cores=$3 threads=$4 mode=${5:-}
base=$root/sys/devices/system/cpu
mkdir -p "$base/cpufreq"
echo "0-$((sockets * cores * threads - 1))" > "$base/online"
t=0
while [ $t -lt "$threads" ]; do
        s=0
        while [ $s -lt "$sockets" ]; do
                c=0
                while [ $c -lt "$cores" ]; do
                        if [ "$mode" = interleaved ]; then
                                id=$((t * sockets * cores + c * sockets + s))
                        else
                                id=$((t * sockets * cores + s * cores + c))
                        fi
                        d=$base/cpu$id/topology
                        mkdir -p "$d"
                        echo "$s" > "$d/physical_package_id"
                        echo 0 > "$d/die_id"
                        echo $((c * 2)) > "$d/core_id"
                        c=$((c + 1))
                done
                s=$((s + 1))
        done
        t=$((t + 1))
done

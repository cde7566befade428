#!/bin/bash
# One device run of diagnostics beside the kit (docs/REAL_GPU.md): the PM-sampling call
# sequence standalone in variants (pm_probe), then the kit's parts named in $1, then the PM
# window part again under glibc's malloc checks. Everything lands in $OUT/diag.tgz.
# Usage (device tool): tools/gpu-check/diag_once.sh b_pm,c_telem,e_torch
parts=${1:-b_pm,c_telem,e_torch}
kit=$PWD/gpu-kit; o=/tmp/diag; mkdir -p $o
export LD_LIBRARY_PATH=/tmp/gk-deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; mkdir -p /tmp/gk-deps
for p in 1 2 3 4 5 6; do
  ldd $kit/lib/libkairos_core.so $kit/bin/kairos 2>&1 | awk '/not found/{print $1}' | sort -u |
    while read -r l; do ln -sf $kit/deps/$l /tmp/gk-deps/$l; done
done
seg=$kit/lib/segv_trace.so
# (Session 12 ran the first seven on an H100, with the probe's own copy of the call sequence
# decoding every 0.25 s: all read SM active 47-49%, none crashed. The probe now uses
# pm_client.h and decodes once at the end.)
for v in "interval_us=1000" "interval_us=1000 order=hd" "interval_us=1000 append=oldest" \
         "interval_us=1000 thread=1" "interval_us=10000" "interval_us=100000" "interval_us=100" \
         "metrics=telemetry interval_us=100000" "metrics=telemetry interval_us=1000"; do
  LD_PRELOAD=$seg timeout 25 $kit/cuda/pm_probe $v >> $o/probe.log 2>&1
  echo "rc=$? for: $v" >> $o/probe.log
done
cat $o/probe.log
timeout 200 tools/gpu-check/run.sh --kit gpu-kit --out $o/kit --parts "$parts" > $o/run.log 2>&1
tail -12 $o/run.log
dbg=$(ls /usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 2>/dev/null)
LD_PRELOAD="$seg $dbg $kit/lib/libkairos.so" MALLOC_CHECK_=3 \
  KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=30;ACTIVITIES_ITERATIONS=100;ACTIVITIES_WARMUP_ITERATIONS=25;CUPTI_PM_SAMPLING_METRICS=sm__cycles_active.avg.pct_of_peak_sustained_elapsed;KAIROS_PM_SAMPLING_INTERVAL_US=1000;ACTIVITIES_LOG_FILE=$o/pmdbg.json" \
  timeout 30 $kit/cuda/duty_cycle 200 2000 2000 > $o/pmdbg.log 2>&1
echo "rc=$?" >> $o/pmdbg.log
tail -5 $o/pmdbg.log
tar czf $OUT/diag.tgz -C $o .

#!/usr/bin/env bash
# Writes the outputs that must not change across a refactoring into DIR, one file per command, so
# that two builds can be compared byte for byte:
#   tests/compat/outputs.sh OLD_GPUFLEET /tmp/old && tests/compat/outputs.sh build/gpufleet /tmp/new
#   diff -r /tmp/old /tmp/new && echo identical
# With --check FILE, compares them instead with the sha256 sums in FILE (tests/compat/expected.sha256,
# taken from the build before the engine's redesign) and exits 1 on a difference. After a change
# meant to change outputs, check that only the intended outputs differ (diff -r against the old
# build's outputs, as above), then take the new sums in the file's order:
#   tests/compat/outputs.sh build/gpufleet /tmp/new
#   (cd /tmp/new && sha256sum $(awk '{print $2}' "$OLDPWD/tests/compat/expected.sha256")) > /tmp/sums
#   mv /tmp/sums tests/compat/expected.sha256
# Run from the checkout. The openb runs need the traces (../shared/traces or $GPUFLEET_TRACES); they
# are skipped with a message when absent.
set -euo pipefail
check=
if [[ ${1:-} == --check ]]; then check=$(realpath "$2"); shift 2; fi
bin=$(realpath "$1"); out=$(realpath -m "$2")
mkdir -p "$out"
traces=${GPUFLEET_TRACES:-../shared/traces}
openb=$traces/alibaba-gpu-v2023/csv
# Output paths become OUT and the trace directory TRACES, so that runs from different directories
# compare equal.
run() {
  local name=$1; shift; echo "== $name" >&2
  "$bin" "$@" --quiet >"$out/$name.stdout" 2>"$out/$name.stderr"
  sed -i -e "s|$out|OUT|g" -e "s|$traces|TRACES|g" "$out/$name".*
}
finish() {
  [[ -z $check ]] && return 0
  cd "$out"
  if $openb_ran; then sha256sum --quiet -c "$check"; else grep -v -e pack- -e -openb "$check" | sha256sum --quiet -c -; fi
}
openb_ran=false

# place on examples/ (every cluster/workload combination the docs use)
run place-examples place --cluster examples --workload examples --json "$out/place-examples.json"
run place-examples-files place --cluster examples/pools.yaml examples/mig-h100.yaml examples/time-slicing.yaml \
  --workload examples/workloads.yaml examples/priorityclasses.yaml examples/quota-team.yaml --json "$out/place-examples-files.json"
for p in leastallocated bestfit fgd; do
  run "place-examples-$p" place --cluster examples --workload examples --policy "$p" --json "$out/place-examples-$p.json"
done
# simulate / compare on examples/simulate
run simulate-examples simulate --pools examples/simulate/pools.yaml --workload examples/simulate/workload.yaml \
  --json "$out/simulate-examples.json" --timeseries "$out/simulate-examples.csv"
for p in random fgd fgd-online bestfit; do
  run "simulate-examples-$p" simulate --pools examples/simulate/pools.yaml --workload examples/simulate/workload.yaml \
    --policy "$p" --json "$out/simulate-examples-$p.json"
done
run simulate-examples-baseline simulate --pools examples/simulate/baseline-pools.yaml \
  --workload examples/simulate/workload.yaml --policy leastallocated --json "$out/simulate-examples-baseline.json"
run compare-examples compare --workload examples/simulate/workload.yaml \
  --config baseline=examples/simulate/baseline-pools.yaml,leastallocated --config gpufleet=examples/simulate/pools.yaml \
  --json "$out/compare-examples.json"
if [[ ! -d $openb ]]; then
  echo "outputs.sh: $openb absent, openb runs skipped" >&2
  finish; exit $?
fi
openb_ran=true
run compare-openb compare --openb-pods "$openb/openb_pod_list_default.csv" --time-scale 40 --trace-start 9417600 \
  --config baseline=examples/openb/baseline-pools.yaml,leastallocated --config gpufleet=examples/openb/pools.yaml \
  --json "$out/compare-openb.json"
# pack's summary table has a wall-time column, so its stdout is not compared (its JSON is).
run pack-default pack --policy all --seeds 42-51 --json "$out/pack-default.json"
run pack-gpuspec33 pack --pods "$openb/openb_pod_list_gpuspec33.csv" --policy all --seeds 42-51 --json "$out/pack-gpuspec33.json"
# pack's table has a time column (seconds per run): its JSON is the output compared.
rm -f "$out"/pack-*.stdout
finish

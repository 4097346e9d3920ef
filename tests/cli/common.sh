# Shared by the CLI end-to-end tests (sourced): a scratch folder $T removed on exit, pass/fail
# counters with a closing "N passed, M failed" line, and a tiny openb cluster and workload.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0; passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
finish() { echo "$passes passed, $fails failed"; [ "$fails" = 0 ]; exit $?; }

cat > "$T/nodes.csv" <<'CSV'
sn,cpu_milli,memory_mib,gpu,model
node-a,32000,131072,4,V100M16
node-b,16000,65536,2,T4
node-c,96000,393216,8,G2
CSV
cat > "$T/pods.csv" <<'CSV'
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
pod-1,4000,8192,1,500,,LS,Running,0,10,0
pod-2,8000,16384,2,1000,,LS,Running,0,10,0
pod-3,2000,4096,0,0,,BE,Running,0,10,0
pod-4,4000,8192,1,250,T4,LS,Running,0,10,0
pod-5,16000,32768,4,1000,V100M16|G2,LS,Running,0,10,0
CSV

// `gpufleet serve`'s HTTP server (cpp-httplib): the kube-scheduler extender verbs, /metrics, health
// and readiness, snapshots for offline use, the KEDA metrics-api. Contract in docs/live.md.
#pragma once

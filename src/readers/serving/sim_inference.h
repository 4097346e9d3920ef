// The `inference:` block of a service in a simulator workload file (readers/sim/workload_file.h): the vLLM
// engine its replicas run, where its requests come from, its router, SLO, cold start, metrics and
// replica autoscaler. Full description: docs/serving.md.
//
//   services:
//   - name: chat
//     replicas: 2                        # replicas at the start
//     gpus: 1                            # = engine.tensorParallelSize
//     inference:
//       model: Llama-3.1-8B              # a serving-catalog model or alias (required, unless deployment)
//       deployment: vllm-deployment.yaml # or: a vLLM Deployment (apps/v1) whose container args give the
//                                        # model and engine arguments; it also fills the item's replicas,
//                                        # gpus / mig, namespace, nodeSelector and tolerations when absent
//       engine: {tensorParallelSize: 1, dtype: bf16, kvCacheDtype: bf16, gpuMemoryUtilization: 0.9,
//                maxNumSeqs: 256, maxNumBatchedTokens: 0, maxModelLen: 0, blockSize: 16,
//                enablePrefixCaching: true, shutdownTimeoutSeconds: 0}   # vLLM's engine arguments;
//                                        # 0 = vLLM's default
//       stepProfile: [{numSeqs: 1, tokens: 1, stepSeconds: 0.008}, ...]  # optional measured table, or
//                                        # the path of a CSV (num_seqs,tokens,step_s; readers/serving/step_profile.h)
//       traffic:                         # required: a trace ...
//         trace: conv.csv                #   Azure LLM inference CSV or Mooncake JSONL, relative to this file
//         format: auto                   #   auto | azure | mooncake
//         timeScale: 1                   #   arrival times x this
//         rateMultiplier: 1              #   each request this many times (fractions drawn, seeded)
//         startSeconds: 0                #   window of the trace [start, end); start becomes time 0
//         endSeconds: ...
//         delaySeconds: 0                #   the first request this long after the simulation starts
//       # or: traffic: {generate: {meanRatePerSecond, peakToTrough: 1, peakHour: 14, weekendFactor: 1,
//       #       tokens: {fromTrace: FILE, law: lognormal | empirical} | {promptMean, promptMedian,
//       #       outputMean, outputMedian}, maxPromptTokens, maxOutputTokens}}
//       router: {policy: least-outstanding | round-robin | prefix-affinity,
//                maxOutstandingPerReplica: 0, requestTimeoutSeconds: 0}
//       slo: {ttftP99Seconds: 2, tpotP99Seconds: 0.1}
//       coldStart: {imagePullSeconds: 120, weightLoadGBps: 1, cachedWeights: false,
//                   cachedWeightLoadGBps: 5, engineStartSeconds: 60, snapshotRestore: false,
//                   snapshotRestoreSeconds: 10}
//       scrapeIntervalSeconds: 15
//       autoscaler:                      # optional (docs/serving.md)
//         kubernetes: keda.yaml          #   one HorizontalPodAutoscaler or ScaledObject, as users write them
//         predictive: {capacityRpsPerReplica, headroom: 1.2, leadSeconds: 0, minReplicas: 1,
//                      maxReplicas: 100, rateMetric: gpufleet:request_arrival_rate,
//                      evaluationPeriodSeconds: 60, forecast: {...}}   # with kubernetes: it floors it
#pragma once

#include <string>

#include "inference/catalog.h"
#include "readers/formats/yaml_field.h"
#include "inputs/sim/inference_service.h"
#include "inputs/sim/workload.h"

namespace gpufleet::io {

/// Parses the block `f` of the service item `item`, whose fields are in `service` (already parsed; a
/// `deployment:` fills those the item leaves out); relative paths in it are resolved
/// against `base_dir` (the workload file's folder); a generator runs over [0, horizon_s). Defaults of the cold start come from `catalog`.
/// Throws InputError naming file, line, column and field.
sim::InferenceServiceSpec parse_inference_service(const detail::Field& f, const detail::Field& item,
                                                  sim::WorkloadSpec& service,
                                                  const std::string& base_dir, double horizon_s,
                                                  const inference::ServingCatalog& catalog);

}  // namespace gpufleet::io

# The layers of src/, lowest first: which files form each layer and which lower layers it may use.
# A layer is a CMake target; an #include of a layer it does not use fails to build. Format and rules:
# cmake/Layers.cmake; the why and how to add a folder: docs/architecture.md. Check the include graph:
# scripts/include-graph.
#
# A folder names every file under it (subfolders included) unless a deeper folder or a single
# concept (path without extension) is named by another layer: new files join their folder's layer.

# Foundations: errors, seeded random numbers, atomic files, progress, the thread pool.
gpufleet_layer(util             SOURCES util
                                EXTERNAL Threads::Threads gpufleet_generated)

# The domain: catalog, quantities, nodes, pods, cluster state.
gpufleet_layer(model            SOURCES model
                                PRIVATE util)

# Admission (ResourceQuota), on the pod model.
gpufleet_layer(admit            SOURCES admit
                                PUBLIC model)

# Kueue-style queues, no I/O and no nodes: ResourceFlavor, ClusterQueue, Cohort trees, LocalQueue,
# Workloads, and KueueScheduler (quota reservation, borrowing and lending, preemption, fair sharing,
# waitForPodsReady). Placement-aware admission asks the caller through a PlacementCheck.
gpufleet_layer(queue            SOURCES queue
                                PUBLIC model
                                PRIVATE util)

# Synthetic clusters and workloads shaped on the openb trace and on Kubernetes examples.
gpufleet_layer(workload         SOURCES workload
                                PUBLIC model
                                PRIVATE util)

# LLM inference serving, no I/O: the serving catalog's types (models, GPU figures, latency
# constants), KV-cache capacity, step-time models, the vLLM replica engine, the router and a
# deployment of replicas. `bench-serve` and `simulate`'s inference services build on it.
gpufleet_layer(inference        SOURCES inference
                                PUBLIC model util)

# Replica autoscalers' rules, no I/O: HorizontalPodAutoscaler (autoscaling/v2), KEDA ScaledObject,
# a predictive scaler. The simulator's controllers and the live server call them.
gpufleet_layer(autoscaling      SOURCES autoscaling
                                PUBLIC util)

# The simulator's inputs: pools, jobs and services, the workload generator, the openb trace mapping.
# Plain types the readers build, apart from the engine so that the readers need no engine.
gpufleet_layer(sim_inputs       SOURCES sim/config sim/faults sim/workload sim/workload_generator sim/openb_trace sim/inference_service
                                PUBLIC model util inference autoscaling queue)

# The pack experiment's inputs: the FGD artifact's reference curves.
gpufleet_layer(pack_inputs      SOURCES pack/reference_run)

# Readers: inputs at the edge (openb CSV, Kubernetes YAML/JSON, pool and simulator files, the FGD
# reference, LLM request traces, the serving catalog), each building domain types. The fuzz targets
# (fuzz/) build this layer and those below.
gpufleet_layer(io_readers       SOURCES io/input_limits io/text_file io/csv_table io/yaml_tree io/yaml_field
                                        io/json_request io/openb_csv io/fgd_reference io/k8s_yaml io/pool_file
                                        io/sim_pools io/sim_workload io/sim_inference io/request_trace
                                        io/inference_catalog io/k8s_serving io/step_profile io/kueue_yaml
                                        io/node_resource_topology io/karpenter_nodepool io/fault_schedule
                                        io/extender_args io/kube_watch io/kubeconfig io/scaler_observation io/k8s_json
                                PUBLIC model admit queue sim_inputs pack_inputs inference autoscaling
                                PRIVATE util
                                EXTERNAL PkgConfig::LIBYAML gpufleet_generated)

# The scheduling framework (extension points, profiles, the registry type), fragmentation, device
# selection: what plugins build on.
gpufleet_layer(sched_framework  SOURCES sched/framework sched/fragmentation sched/pod_mix_estimator sched/device_select
                                PUBLIC model util)

# The plugins (Filter, Score, PostFilter DefaultPreemption, ...) and the in-tree registry.
gpufleet_layer(sched_plugins    SOURCES sched/plugins
                                PUBLIC sched_framework)

# The scheduler, fit errors and the policy registry (the policies' profiles), on top of the plugins.
gpufleet_layer(sched            SOURCES sched
                                PUBLIC sched_framework
                                PRIVATE sched_plugins util)

# Upper bounds on allocation (LP, GLPK); a pod fits a node type by the scheduler's own fit test
# (sched/plugins/node_resources_fit.h).
gpufleet_layer(bound            SOURCES bound
                                PUBLIC model
                                PRIVATE sched_plugins
                                EXTERNAL gpufleet_glpk)

# The FGD packing experiment (`gpufleet pack`).
gpufleet_layer(pack             SOURCES pack
                                PUBLIC model util pack_inputs
                                PRIVATE sched bound)

# Placement of Kubernetes objects (`gpufleet place`).
gpufleet_layer(place            SOURCES place
                                PUBLIC model admit queue sched util
                                PRIVATE sched_plugins)

# The simulator's engine (`gpufleet simulate` / `compare`).
gpufleet_layer(sim              SOURCES sim
                                PUBLIC sim_inputs
                                PRIVATE sched queue util)

# Writers (JSON, CSV, HTML reports) and the assembly of inputs for the commands.
gpufleet_layer(io               SOURCES io
                                PUBLIC io_readers pack place sim
                                PRIVATE util)

# The live server's state and decisions, no network: the cluster cache and its snapshots, the
# extender verbs' answers, the Prometheus text of gpufleet's view, the replica recommendation for
# inference services. Kueue's split: state and decision here, I/O in `server`.
gpufleet_layer(live             SOURCES live
                                PUBLIC io io_readers place sched model util autoscaling)

# The live server's I/O: the HTTP server (cpp-httplib) and its routes, the API-server list/watch
# client, the KEDA external scaler (gRPC), replay.
gpufleet_layer(server           SOURCES server
                                PUBLIC live
                                PRIVATE io sim util
                                EXTERNAL PkgConfig::HTTPLIB OpenSSL::SSL OpenSSL::Crypto gpufleet_externalscaler_proto)

# The command line: thin front doors.
gpufleet_layer(cli              EXECUTABLE gpufleet
                                SOURCES cli
                                PRIVATE io pack place sim sched workload util server live)

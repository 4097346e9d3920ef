# The layers of src/, lowest first: which files form each layer and which lower layers it may use.
# A layer is a CMake target; an #include of a layer it does not use fails to build. Format and rules:
# cmake/Layers.cmake; the why and how to add a folder: docs/architecture.md. Check the include graph:
# scripts/include-graph.
#
# Each row names folders only: a layer is a folder of src/ (its files and those of its subfolders that
# no deeper row names), so the tree shows the layers. New files join their folder's layer.

# Foundations: errors, seeded random numbers, atomic files, progress, the thread pool.
gpufleet_layer(util             SOURCES util
                                EXTERNAL Threads::Threads gpufleet_generated)

# The domain: catalog, quantities, nodes, pods, cluster state.
gpufleet_layer(model            SOURCES model
                                PRIVATE util)

# The Common Expression Language as Kubernetes' Dynamic Resource Allocation evaluates it (device
# selectors): the parser ANTLR generates from CEL's published grammar (cmake/CelGrammar.cmake), the
# checks and the evaluator, with Kubernetes' quantity and semver libraries. No I/O.
gpufleet_layer(cel              SOURCES cel
                                PUBLIC model
                                PRIVATE util
                                EXTERNAL gpufleet_cel_grammar)

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
gpufleet_layer(synthetic        SOURCES synthetic
                                PUBLIC model
                                PRIVATE util)

# LLM inference serving, no I/O: the serving catalog's types (models, GPU figures, latency
# constants), KV-cache capacity, step-time models, the vLLM replica engine, the router and a
# deployment of replicas. `bench-serve` and `simulate`'s inference services build on it.
gpufleet_layer(inference        SOURCES inference
                                PUBLIC model util)

# Replica autoscalers' rules, no I/O: HorizontalPodAutoscaler (autoscaling/v2), KEDA ScaledObject,
# a predictive scaler. The simulator's controllers and the live server call them.
gpufleet_layer(replica_autoscaling SOURCES replica_autoscaling
                                PUBLIC util)

# The simulator's inputs: pools, jobs and services, the job generator, the openb trace mapping, the
# run's options. Plain types the readers build, apart from the engine so that the readers need none.
gpufleet_layer(sim_inputs       SOURCES inputs/sim
                                PUBLIC model util inference replica_autoscaling queue)

# The pack experiment's inputs: the FGD artifact's reference curves.
gpufleet_layer(pack_inputs      SOURCES inputs/pack)

# What `place` takes in: nodes, pods, quotas, disruption budgets, Kueue objects, pod groups.
gpufleet_layer(place_inputs     SOURCES inputs/place
                                PUBLIC model admit queue)

# What `plan` takes in besides the workload: the price catalog and the constraints and SLOs.
gpufleet_layer(plan_inputs      SOURCES inputs/plan
                                PUBLIC sim_inputs)

# Readers: inputs at the edge (openb CSV, Kubernetes YAML/JSON, pool and simulator files, the FGD
# reference, LLM request traces, the serving catalog, the live server's API bodies), each building
# domain types. The fuzz targets (fuzz/) build this layer and those below.
gpufleet_layer(readers          SOURCES readers
                                PUBLIC model admit queue sim_inputs pack_inputs place_inputs plan_inputs inference replica_autoscaling
                                PRIVATE util cel
                                EXTERNAL PkgConfig::LIBYAML gpufleet_generated)

# The scheduling framework: extension points, Status, CycleState, profiles, the registry type.
gpufleet_layer(sched_framework  SOURCES sched/framework
                                PUBLIC model util)

# What GPU-aware plugins build on: FGD's fragmentation measure, the pod-mix estimate, device selection.
gpufleet_layer(sched_gpu        SOURCES sched/gpu
                                PUBLIC sched_framework model)

# The plugins (Filter, Score, PostFilter DefaultPreemption, ...) and the in-tree registry.
gpufleet_layer(sched_plugins    SOURCES sched/plugins
                                PUBLIC sched_framework sched_gpu)

# The scheduler, fit errors and the policy registry (the policies' profiles), on top of the plugins.
gpufleet_layer(sched            SOURCES sched
                                PUBLIC sched_framework sched_gpu
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
                                PUBLIC place_inputs model admit queue sched util
                                PRIVATE sched_plugins)

# What a simulation returns: the result types, plain data.
gpufleet_layer(sim_results      SOURCES sim/results
                                PUBLIC sim_inputs queue)

# The simulator's decision rules as pure functions: the Cluster Autoscaler's, cost and chargeback,
# checkpoint intervals.
gpufleet_layer(sim_rules        SOURCES sim/rules
                                PUBLIC sim_inputs model
                                PRIVATE sched_gpu sched_plugins)

# The simulator's engine: the event loop (one clock), the fleet, billing, placement, the pending queue,
# the units (jobs and service replicas), metrics.
gpufleet_layer(sim_engine       SOURCES sim/engine
                                PUBLIC sim_inputs sim_results sim_rules sched queue
                                PRIVATE util)

# The simulator's controllers, one module each: Cluster Autoscaler, Karpenter provisioner,
# consolidation, inference services, Kueue admission, fault injector, alerting, driver upgrade.
gpufleet_layer(sim_controllers  SOURCES sim/controllers
                                PUBLIC sim_engine
                                PRIVATE util)

# The simulator's front door (`gpufleet simulate` / `compare`) and the wiring of its parts.
gpufleet_layer(sim              SOURCES sim
                                PUBLIC sim_inputs sim_results
                                PRIVATE sim_engine sim_controllers util)

# The planner (`gpufleet plan`): the workload's demand, the cost lower bound (LP, GLPK), the candidate
# configurations and their search with the simulator as the objective, the frontier and the chosen plan.
gpufleet_layer(plan             SOURCES plan
                                PUBLIC plan_inputs sim_inputs sim_results
                                PRIVATE sim model util
                                EXTERNAL gpufleet_glpk)

# Writers: JSON, CSV, HTML reports and Prometheus text of the engines' results.
gpufleet_layer(report           SOURCES report
                                PUBLIC readers pack place sim_results plan
                                PRIVATE util)

# The live server's state and decisions, no network: the cluster cache and its snapshots, the
# extender verbs' answers, gpufleet's view as metrics, the inference services' replica
# recommendation. Kueue's split: state and decision here, I/O in `server`.
gpufleet_layer(live             SOURCES live
                                PUBLIC readers report place sched model util replica_autoscaling
                                PRIVATE sim_rules)

# The live server's I/O: the HTTP server (Boost.Beast) and its routes, the API-server list/watch
# client (cpp-httplib), the KEDA external scaler (gRPC), replay.
gpufleet_layer(server           SOURCES server
                                PUBLIC live
                                PRIVATE report sim util
                                EXTERNAL PkgConfig::HTTPLIB Boost::headers ZLIB::ZLIB OpenSSL::SSL OpenSSL::Crypto gpufleet_externalscaler_proto)

# The command line: thin front doors.
gpufleet_layer(cli              EXECUTABLE gpufleet
                                SOURCES cli
                                PRIVATE report readers pack place sim plan sched synthetic util server live)

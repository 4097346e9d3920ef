# The small price catalog the plan tests share (sourced): two L4 instance types, AWS us-east-1 list
# prices as examples/plan/catalog.yaml. plan_catalog prints the PriceCatalog document;
# plan_constraints the PlanConstraints those tests plan under (production p99 pending 600 s, half of
# the GPU-hours on spot at most, 1-year reservations).
plan_catalog() {
  cat <<'YAML'
apiVersion: plan.gpufleet.io/v1
kind: PriceCatalog
instanceTypes:
- name: g6.xlarge
  gpu: {model: L4, count: 1}
  cpu: 3920m
  memory: 13Gi
  offerings:
  - {zone: us-east-1a, onDemand: 0.8048, spot: 0.3219, spotInterruptionsPerNodeHour: 0.00017, reserved1y: 0.472}
- name: g6.12xlarge
  gpu: {model: L4, count: 4}
  cpu: 47810m
  memory: 181Gi
  offerings:
  - {zone: us-east-1a, onDemand: 4.6016, spot: 1.8406, spotInterruptionsPerNodeHour: 0.00017, reserved1y: 2.6989}
YAML
}

plan_constraints() {
  cat <<'YAML'
apiVersion: plan.gpufleet.io/v1
kind: PlanConstraints
slo:
  productionP99PendingSeconds: 600
maxSpotShare: 0.5
commitments: [reserved1y]
YAML
}

# The small price catalog the plan tests share (sourced): two L4 instance types, AWS us-east-1 list
# prices as examples/plan/catalog.yaml. plan_catalog prints the PriceCatalog document.
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

#!/usr/bin/env bash
# The anchor of `cargo bench --bench grade`: lab 5 (efa-nccl)'s nine checks on kind written the
# way workshop verifiers are usually written, one `kubectl get … -o json | jq` per check, run
# against the same API emulator as `trainlab check efa-nccl`. It knows only the solution's
# arrangement (a batch/v1 Job named nccl-efa with a nodeSelector): trainlab grades far more
# shapes, so this is a lower bound on the script's work. Exit 0 when all nine pass.
#
#   KUBECONFIG=… bash benches/anchor/efa-nccl.sh [NAMESPACE]
set -euo pipefail
ns=${1:-trainlab-efa-nccl}
job=nccl-efa
failed=0
check() { # check ID: reads the verdict of the jq program on stdin (true/false)
  if [ "$(cat)" = true ]; then echo "pass $1"; else echo "FAIL $1"; failed=1; fi
}
# EFA interfaces and GPUs of the EFA-capable GPU types the lab names (its instance table).
types='{"p5.48xlarge":{"efa":32,"gpus":8},"p5e.48xlarge":{"efa":32,"gpus":8},"p4d.24xlarge":{"efa":4,"gpus":8},"p4de.24xlarge":{"efa":4,"gpus":8}}'
gpu_container='.spec.template.spec.containers[] | select(.resources.limits["nvidia.com/gpu"] != null)'

kubectl get job "$job" -n "$ns" -o json | jq "[$gpu_container | .resources as \$r
  | \$r.limits[\"vpc.amazonaws.com/efa\"] != null
    and ((\$r.requests // {})[\"vpc.amazonaws.com/efa\"] // \$r.limits[\"vpc.amazonaws.com/efa\"]) == \$r.limits[\"vpc.amazonaws.com/efa\"]]
  | all and length > 0" | check efa-in-limits
kubectl get job "$job" -n "$ns" -o json | jq --argjson t "$types" "
  .spec.template.spec.nodeSelector[\"node.kubernetes.io/instance-type\"] as \$type
  | [$gpu_container | (.resources.limits[\"vpc.amazonaws.com/efa\"] | tonumber) == \$t[\$type].efa] | all and length > 0" \
  | check efa-count
kubectl get job "$job" -n "$ns" -o json | jq --argjson t "$types" "
  .spec.template.spec.nodeSelector[\"node.kubernetes.io/instance-type\"] as \$type
  | [$gpu_container | (.resources.limits[\"nvidia.com/gpu\"] | tonumber) == \$t[\$type].gpus] | all and length > 0" \
  | check gpus-whole-node
kubectl get job "$job" -n "$ns" -o json | jq "[$gpu_container | (.env // [])[]
  | select((.name == \"FI_PROVIDER\" and .value != \"efa\") or (.name == \"NCCL_NET\" and (.value == \"Socket\" or .value == \"IB\")))]
  | length == 0" | check fi-provider
kubectl get job "$job" -n "$ns" -o json | jq --argjson t "$types" \
  '.spec.template.spec.nodeSelector["node.kubernetes.io/instance-type"] as $type | $t | has($type // "")' \
  | check efa-instance-type
kubectl get job "$job" -n "$ns" -o json \
  | jq '.spec.template.spec.nodeSelector["topology.kubernetes.io/zone"] != null' | check single-zone

# State: the Job's pods (by its controller-uid label) and the nodes they are bound to.
uid=$(kubectl get job "$job" -n "$ns" -o jsonpath='{.metadata.uid}')
nodes=$(kubectl get pods -n "$ns" -l "batch.kubernetes.io/controller-uid=$uid" -o json | jq -r '.items[].spec.nodeName // empty')
ok=true
for n in $nodes; do
  efa=$(kubectl get node "$n" -o json | jq -r '.status.allocatable["vpc.amazonaws.com/efa"] // "0"')
  [ "$efa" -ge 32 ] || ok=false
done
[ -n "$nodes" ] || ok=false
echo "$ok" | check pods-on-efa-nodes
zones=$(for n in $nodes; do kubectl get node "$n" -o json | jq -r '.metadata.labels["topology.kubernetes.io/zone"]'; done | sort -u | wc -l)
[ "$zones" -eq 1 ] && echo true | check pods-same-zone || echo false | check pods-same-zone
kubectl get pods -n "$ns" -l "batch.kubernetes.io/controller-uid=$uid" -o json \
  | jq '[.items[] | select(.status.phase == "Running" or .status.phase == "Succeeded")] | length == 2' \
  | check pods-running
exit $failed

//! What accelerated capacity a set of objects starts: "2 × p5.48xlarge (16 GPUs, 64 EFA)".
//! `start` and `solve` say it before they apply on the EKS profile (and ask first), `reset`
//! says what it frees. Only counts the objects state: the pods each workload asks for, their
//! accelerator requests, and the instance type their placement names. No prices: they differ
//! by region, purchase option and date, and an invented one would mislead.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};

use crate::facts::instances::{self, EFA, GPU, INSTANCE_TYPE_LABEL, NEURON, NEURONCORE};
use crate::observe::Obj;
use crate::text::say;
use crate::text::Lang;
use crate::verify::kit::k8s::placement::{allowed_values, Allowed};
use crate::verify::kit::k8s::resources::pod_count;
use crate::verify::kit::k8s::workload::Workload;

/// Accelerators, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Devices {
    pub gpus: i64,
    pub efa: i64,
    pub neuron: i64,
    pub neuroncores: i64,
}

impl Devices {
    fn is_empty(&self) -> bool {
        *self == Devices::default()
    }

    fn add(&mut self, other: Devices, times: i64) {
        self.gpus = self.gpus.saturating_add(other.gpus.saturating_mul(times));
        self.efa = self.efa.saturating_add(other.efa.saturating_mul(times));
        self.neuron = self
            .neuron
            .saturating_add(other.neuron.saturating_mul(times));
        self.neuroncores = self
            .neuroncores
            .saturating_add(other.neuroncores.saturating_mul(times));
    }

    /// `16 GPUs, 64 EFA`: only what is asked for.
    fn said(&self, lang: Lang) -> String {
        let mut parts = Vec::new();
        let mut part = |n: i64, one: &str, many: &str, ja: &str| {
            if n > 0 {
                parts.push(say(
                    lang,
                    format!("{ja} {n}"),
                    format!("{n} {}", if n == 1 { one } else { many }),
                ));
            }
        };
        part(self.gpus, "GPU", "GPUs", "GPU");
        part(self.efa, "EFA", "EFA", "EFA");
        part(
            self.neuron,
            "Neuron device",
            "Neuron devices",
            "Neuron デバイス",
        );
        part(self.neuroncores, "NeuronCore", "NeuronCores", "NeuronCore");
        parts.join(", ")
    }

    /// From one pod spec's requests.
    fn of_pod(spec: &PodSpec) -> Devices {
        let count = |r: &str| pod_count(spec, r).unwrap_or(0).max(0);
        Devices {
            gpus: count(GPU),
            efa: count(EFA),
            neuron: count(NEURON),
            neuroncores: count(NEURONCORE),
        }
    }
}

/// One kind of machine the objects need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machines {
    /// The instance type the pods are placed on; None when their placement names none (or
    /// several).
    pub instance_type: Option<String>,
    /// Nodes of that type the pods fill, when the type is known to trainlab.
    pub nodes: Option<i64>,
    pub pods: i64,
    pub devices: Devices,
}

/// The accelerated capacity of a set of objects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capacity {
    pub machines: Vec<Machines>,
}

impl Capacity {
    /// What the workloads among `objs` ask for. Objects that are not workloads, and templates
    /// without accelerators, add nothing; a workload trainlab cannot read adds nothing either
    /// (applying it is refused or graded elsewhere, not here).
    pub fn of(objs: &[Obj]) -> Capacity {
        let mut by_type: BTreeMap<Option<String>, (i64, Devices, Option<i64>)> = BTreeMap::new();
        for o in objs {
            for (spec, replicas) in pod_groups(o) {
                let per_pod = Devices::of_pod(&spec);
                if per_pod.is_empty() || replicas <= 0 {
                    continue;
                }
                let instance_type = match allowed_values(&spec, INSTANCE_TYPE_LABEL) {
                    Allowed::Only(set) if set.len() == 1 => set.into_iter().next(),
                    _ => None,
                };
                let nodes = instance_type
                    .as_deref()
                    .and_then(instances::lookup)
                    .and_then(|i| nodes_for(replicas, per_pod, i));
                let entry =
                    by_type
                        .entry(instance_type)
                        .or_insert((0, Devices::default(), Some(0)));
                entry.0 = entry.0.saturating_add(replicas);
                entry.1.add(per_pod, replicas);
                entry.2 = match (entry.2, nodes) {
                    (Some(a), Some(b)) => Some(a.saturating_add(b)),
                    _ => None,
                };
            }
        }
        Capacity {
            machines: by_type
                .into_iter()
                .map(|(instance_type, (pods, devices, nodes))| Machines {
                    nodes: nodes.filter(|_| instance_type.is_some()),
                    instance_type,
                    pods,
                    devices,
                })
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.machines.is_empty()
    }

    /// One line per kind of machine: `2 × p5.48xlarge (16 GPUs, 64 EFA)`, or for pods whose
    /// instance type is not named, `2 pods (16 GPUs) on nodes of any type that has them`.
    pub fn lines(&self, lang: Lang) -> Vec<String> {
        self.machines
            .iter()
            .map(|m| {
                let devices = m.devices.said(lang);
                match (&m.instance_type, m.nodes) {
                    (Some(t), Some(n)) => format!("{n} × {t} ({devices})"),
                    (Some(t), None) => say(
                        lang,
                        format!("{t} 上の Pod {} 個（{devices}）", m.pods),
                        format!("{} pod(s) on {t} ({devices})", m.pods),
                    ),
                    (None, _) => say(
                        lang,
                        format!(
                            "Pod {} 個（{devices}）。インスタンスタイプの指定なし（それを持つどのタイプのノードでも）",
                            m.pods
                        ),
                        format!(
                            "{} pod(s) ({devices}), on nodes of any instance type that has them",
                            m.pods
                        ),
                    ),
                }
            })
            .collect()
    }
}

/// The pod specs an object runs, each with its number of pods: a workload's templates, or a
/// Pod itself (one; none once it has finished, so `reset` counts only what still holds nodes).
fn pod_groups(o: &Obj) -> Vec<(PodSpec, i64)> {
    if o.api_version() == "v1" && o.kind() == "Pod" {
        let Ok(pod) = o.parse::<Pod>() else {
            return Vec::new();
        };
        let finished = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_some_and(|p| p == "Succeeded" || p == "Failed");
        return match pod.spec {
            Some(spec) if !finished => vec![(spec, 1)],
            _ => Vec::new(),
        };
    }
    match Workload::from_obj(o) {
        Ok(Some(w)) => w
            .templates
            .into_iter()
            .map(|t| (t.spec, t.replicas))
            .collect(),
        _ => Vec::new(),
    }
}

/// Nodes of `instance` that `replicas` pods of `per_pod` fill: as many pods on a node as its
/// scarcest accelerator allows (a pod that asks for more than a node has fits on none: None).
fn nodes_for(replicas: i64, per_pod: Devices, instance: &instances::Instance) -> Option<i64> {
    let fit = |want: i64, has: u32| -> Option<i64> {
        if want == 0 {
            None
        } else {
            Some(i64::from(has) / want)
        }
    };
    let per_node = [
        fit(per_pod.gpus, instance.gpus),
        fit(per_pod.efa, instance.efa),
        fit(per_pod.neuron, instance.neuron),
        fit(per_pod.neuroncores, instance.neuroncores),
    ]
    .into_iter()
    .flatten()
    .min()?;
    (per_node > 0).then(|| (replicas + per_node - 1) / per_node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::parse_text;

    fn capacity(yaml: &str) -> Capacity {
        Capacity::of(&parse_text(yaml, "test.yaml").unwrap())
    }

    const MPIJOB: &str = r#"
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: nccl}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: l, image: x, resources: {requests: {cpu: "1"}}}]
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
          containers:
          - name: w
            image: x
            resources:
              limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}
"#;

    #[test]
    fn two_whole_p5_workers_are_two_p5_nodes_with_their_gpus_and_efa() {
        let c = capacity(MPIJOB);
        assert_eq!(c.lines(Lang::En), vec!["2 × p5.48xlarge (16 GPUs, 64 EFA)"]);
    }

    #[test]
    fn pods_sharing_a_node_fill_fewer_nodes() {
        let yaml = MPIJOB.replace("replicas: 2", "replicas: 4").replace(
            "nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32",
            "nvidia.com/gpu: 4",
        );
        assert_eq!(
            capacity(&yaml).lines(Lang::En),
            vec!["2 × p5.48xlarge (16 GPUs)"]
        );
    }

    #[test]
    fn a_pod_without_an_instance_type_is_counted_without_inventing_one() {
        let yaml = MPIJOB.replace(
            "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}",
            "nodeSelector: {}",
        );
        assert_eq!(
            capacity(&yaml).lines(Lang::En),
            vec!["2 pod(s) (16 GPUs, 64 EFA), on nodes of any instance type that has them"]
        );
    }

    #[test]
    fn objects_without_accelerators_start_nothing() {
        let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: busybox}]\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
        assert!(capacity(yaml).is_empty());
    }

    #[test]
    fn trainium_pods_are_counted_in_neuron_devices() {
        let yaml = r#"
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 1
  template:
    spec:
      nodeSelector: {node.kubernetes.io/instance-type: trn1.32xlarge}
      containers:
      - name: c
        image: x
        resources: {limits: {aws.amazon.com/neuron: 16}}
"#;
        assert_eq!(
            capacity(yaml).lines(Lang::En),
            vec!["1 × trn1.32xlarge (16 Neuron devices)"]
        );
    }
}

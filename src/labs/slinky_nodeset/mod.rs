//! Lab `slinky-nodeset` (quiz question 4): a GPU partition as a Slinky `NodeSet` `gpu-h100`:
//! slurmd pods placed on the GPU nodes of one instance type, each asking for all of its node's
//! GPUs, one per node, in a Slurm partition, registered with the Controller `slurm`.
//!
//! Spec checks judge the NodeSet as written (also with `--files`) through the kit's workload
//! view (the pod the operator builds: `spec.slurmd` first, merged with `spec.template.spec`),
//! so any placement that keeps the pods on that instance type passes (`nodeSelector` on the
//! instance type or on the GPU product, node affinity, DaemonSet scaling mode). The quiz's
//! `SlurmNodeSet` is failed by name in static mode (kit `slinky`). State checks read the
//! NodeSet's own status (pods Ready; the Slurm node states the operator reads back from
//! slurmctld) and the pods it owns, by ownerReference uid.
//!
//! Upstream (SlinkyProject/slurm-operator v1.2.1, views in views/slinky.rs):
//! - `NodeSetSpec{controllerRef (required), replicas (default 1), scalingMode (StatefulSet |
//!   DaemonSet: one pod per matching node, replicas ignored), slurmd, logfile, template,
//!   partition{enabled}}` and `NodeSetStatus{readyReplicas, desired, slurmIdle, slurmAllocated,
//!   slurmDown, slurmDrain}` (`api/v1beta1/nodeset_types.go`);
//! - the NodeSet controller creates the pods itself, owned by the NodeSet
//!   (`docs/concepts/nodeset-controller.md`);
//! - `partition.enabled` adds `PartitionName=<nodeset> Nodes=<nodeset>` to slurm.conf
//!   (`internal/builder/controllerbuilder/controller_config.go`);
//! - GPUs reach Slurm as GRES: `Gres=gpu:N` in `extraConf` and a gres.conf (`AutoDetect=nvidia`)
//!   the Controller mounts (`docs/installation.md` "With GPUs"; kit `slinky`). Advice on EKS
//!   only, where the GPUs are real.

use crate::facts::instances::{GPU, INSTANCE_TYPE_LABEL};
use crate::facts::NodeFacts;
use crate::facts::Profile;
use crate::observe::kinds::{CONFIGMAPS, NODESETS, PODS, SLURM_CONTROLLERS};
use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::owned;
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::pods;
use crate::verify::kit::k8s::resources::{self, Rule};
use crate::verify::kit::k8s::rollout::{self, Rollout};
use crate::verify::kit::k8s::workload::{PodTemplate, Workload};
use crate::verify::kit::training::slinky;
use crate::verify::views::slinky::{NodeSet, SCALING_DAEMONSET, SCALING_STATEFULSET};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Verifier};

pub struct SlinkyNodeset;

static NODESETS_READ: Read = Read::lab(&NODESETS);
static CONTROLLERS_READ: Read = Read::lab(&SLURM_CONTROLLERS);
static PODS_READ: Read = Read::lab(&PODS);
// The Controller's `configFileRefs` ConfigMaps: where gres.conf lives.
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
static READS: &[&Read] = &[
    &NODESETS_READ,
    &CONTROLLERS_READ,
    &PODS_READ,
    &CONFIGMAPS_READ,
];

const NODESET: &str = "gpu-h100";
const KIND: &str = "nodeset-kind";
const CONTROLLER_REF: &str = "controller-ref";
const PARTITION: &str = "partition-enabled";
const PLACEMENT: &str = "gpu-placement";
const GPUS: &str = "gpus-per-slurmd";
const REPLICAS: &str = "replicas-match";
const READY: &str = "nodeset-ready";
const REGISTERED: &str = "slurm-nodes-registered";
const CHECKS: &[&str] = &[
    KIND,
    CONTROLLER_REF,
    PARTITION,
    PLACEMENT,
    GPUS,
    REPLICAS,
    READY,
    REGISTERED,
];

impl Verifier for SlinkyNodeset {
    fn lab_id(&self) -> &'static str {
        "slinky-nodeset"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match ctx.named(&NODESETS_READ, NODESET, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => {
                return Ok(slinky::with_unserved(ctx, j, KIND, "NodeSet", NODESET));
            }
        };
        let w = Workload::from_obj(obj)?;
        let Some((w, ns)) = w.as_ref().and_then(|w| Some((w, w.nodeset()?))) else {
            return Err(obj.field_error("kind", "expected a slinky.slurm.net NodeSet"));
        };
        let t = &w.templates[0];
        let gpu = GpuType::find(ctx)?;
        let mut j = Judgement::default();
        j.push(match slinky::wrong_version(KIND, obj) {
            Some(o) => o,
            None => {
                let v = format!("apiVersion: {}, kind: NodeSet", obj.api_version());
                Outcome::pass(KIND).expected_found(&v, &v)
            }
        });
        j.push(controller_ref(ctx, ns, ctx.params.require("controller")?));
        j.push(partition(ns));
        j.push(placement_check(t, &gpu).with("instance_type", &gpu.instance_type));
        j.push(gpus(obj, t, &gpu)?.with("instance_type", &gpu.instance_type));
        j.push(replicas(ns, &gpu).with("instance_type", &gpu.instance_type));
        if let Some(a) = gres_advice(ctx, obj, t, ns)? {
            j.advise(a);
        }
        if ctx.is_static() {
            return Ok(j);
        }
        let pods = match ctx.list(&PODS_READ) {
            Ok(p) => p,
            Err(why) => {
                j.push(Outcome::unavailable(READY, &why));
                j.push(Outcome::unavailable(REGISTERED, &why));
                return Ok(j);
            }
        };
        let current = owned::owned_by(obj, &pods).unwrap_or_default().current;
        let r = Rollout {
            workload: format!("NodeSet/{NODESET}"),
            desired: desired(ns),
            ready: ns.ready_replicas(),
            pods: pods::pod_states(&current)?,
        };
        let missing = slinky::missing_images(obj, &["spec.slurmd", "spec.logfile"])?;
        let what = format!("NodeSet {NODESET}");
        j.push(rollout::outcome(READY, &what, Some(&r), &missing));
        j.push(registered(ns, &r));
        Ok(j)
    }
}

/// Whether Slurm is told about the slurmd's GPUs (kit `slinky::gres_gpus`,
/// `gres_conf_finds_gpus`): without `Gres=gpu:N` in `extraConf` Slurm sees none, and jobs asking
/// for `--gres=gpu` cannot run. Only where the GPUs are real: kind's are node capacity the setup
/// fakes, with no device for slurmd to detect, and a GRES count above what slurmd finds drains the
/// node, so the kind answer leaves GRES out. The Controller's gres.conf is looked at live only
/// (static mode: the starter's Controller and ConfigMap are not among the learner's files).
fn gres_advice(
    ctx: &JudgeCtx,
    obj: &Obj,
    t: &PodTemplate,
    ns: &NodeSet,
) -> Result<Option<Advice>, InputError> {
    if ctx.profile != Profile::Eks {
        return Ok(None);
    }
    let Some((slurmd, path)) = t.containers().next() else {
        return Ok(None);
    };
    let gpus = resources::effective_count(slurmd, GPU)
        .map_err(|e| obj.field_error(path, e))?
        .unwrap_or(0);
    if gpus <= 0 {
        return Ok(None);
    }
    let written = ns.spec.extra_conf.clone().unwrap_or_default();
    let advice = |id: &str| {
        Advice::new(id)
            .with("gpus", gpus)
            .with("extra_conf", dash(&written))
            .with("nodeset", NODESET)
    };
    match slinky::gres_gpus(&written) {
        None => return Ok(Some(advice("no-gres"))),
        Some(n) if n != gpus => return Ok(Some(advice("gres-count").with("gres", n))),
        Some(_) => {}
    }
    if ctx.is_static() {
        return Ok(None);
    }
    let Some(name) = ns.controller_name() else {
        return Ok(None);
    };
    let (Ok(controllers), Ok(maps)) = (ctx.list(&CONTROLLERS_READ), ctx.list(&CONFIGMAPS_READ))
    else {
        return Ok(None);
    };
    let Some(c) = controllers.iter().find(|c| c.name() == name) else {
        return Ok(None);
    };
    let refs: Vec<&str> = c.value["spec"]["configFileRefs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    let found = maps.iter().filter(|m| refs.contains(&m.name())).any(|m| {
        m.value["data"]["gres.conf"]
            .as_str()
            .is_some_and(slinky::gres_conf_finds_gpus)
    });
    Ok((!found).then(|| advice("no-gres-conf").with("controller", name)))
}

/// The pods the NodeSet wants: `status.desired` in DaemonSet mode (one per matching node),
/// else `spec.replicas`.
fn desired(ns: &NodeSet) -> i64 {
    match ns.status.as_ref().and_then(|s| s.desired) {
        Some(d) if ns.is_daemonset_mode() => i64::from(d),
        _ => ns.replicas().0,
    }
}

/// The GPU nodes of the lab's instance type (`--param instance_type`; kind: the p5.48xlarge
/// workers): how many there are and how many GPUs each has. From the cluster's nodes, or in
/// static mode (and from a snapshot without nodes) from `--param nodes` / `gpus_per_node`.
struct GpuType {
    instance_type: String,
    /// Whole nodes of that type that advertise GPUs; Err: the outcome of a check needing it.
    nodes: Result<Vec<NodeFacts>, Box<Outcome>>,
    count: Result<i64, Box<Outcome>>,
    per_node: Result<i64, Box<Outcome>>,
    /// Every node (for placement), empty in static mode.
    all: Vec<NodeFacts>,
}

impl GpuType {
    fn find(ctx: &JudgeCtx) -> Result<GpuType, InputError> {
        let instance_type = ctx
            .params
            .get("instance_type")
            .unwrap_or("p5.48xlarge")
            .to_string();
        let count = Params::number(ctx.params.given("nodes"), "nodes")?;
        let per = Params::number(ctx.params.given("gpus_per_node"), "gpus_per_node")?;
        let need = |v: Option<u32>, name: &str| {
            v.map(i64::from)
                .ok_or_else(|| Box::new(Outcome::skipped("", Reason::NeedsParam(name.into()))))
        };
        let nodes = if ctx.is_static() {
            None
        } else {
            match ctx.node_facts()? {
                Ok(n) => Some(n.to_vec()),
                Err(_) if count.is_some() || per.is_some() => None,
                Err(why) => {
                    let o = Box::new(Outcome::unavailable("", why));
                    return Ok(GpuType {
                        instance_type,
                        nodes: Err(o.clone()),
                        count: Err(o.clone()),
                        per_node: Err(o),
                        all: Vec::new(),
                    });
                }
            }
        };
        let Some(all) = nodes else {
            let why = Box::new(Outcome::skipped("", Reason::NeedsParam("nodes".into())));
            return Ok(GpuType {
                instance_type,
                nodes: Err(why),
                count: need(count, "nodes"),
                per_node: need(per, "gpus_per_node"),
                all: Vec::new(),
            });
        };
        let typed: Vec<NodeFacts> = all
            .iter()
            .filter(|n| n.instance_type.as_deref() == Some(instance_type.as_str()))
            .filter(|n| n.allocatable(GPU) > 0)
            .cloned()
            .collect();
        if typed.is_empty() {
            let o = Outcome::error("", Reason::Message("no-type-nodes".into()))
                .with("instance_type", &instance_type);
            let o = Box::new(o);
            return Ok(GpuType {
                instance_type,
                nodes: Err(o.clone()),
                count: Err(o.clone()),
                per_node: Err(o),
                all,
            });
        }
        let per = typed.iter().map(|n| n.allocatable(GPU)).max().unwrap_or(0);
        Ok(GpuType {
            instance_type,
            count: Ok(typed.len() as i64),
            per_node: Ok(per),
            nodes: Ok(typed),
            all,
        })
    }
}

fn unknown(why: &Outcome, check: &str) -> Outcome {
    let mut o = why.clone();
    o.check = check.to_string();
    o
}

/// `starter`: the Controller `trainlab start` creates (lab.yaml `controller`).
fn controller_ref(ctx: &JudgeCtx, ns: &NodeSet, starter: &str) -> Outcome {
    let name = ns.controller_name().unwrap_or_default();
    let expected = format!("spec.controllerRef.name: {starter}");
    let found = format!("spec.controllerRef.name: {}", dash(name));
    if name.is_empty() {
        return Outcome::fail(CONTROLLER_REF, expected, found)
            .hint("no-ref")
            .with("controller", starter);
    }
    let mut controllers: Vec<String> = match ctx.list(&CONTROLLERS_READ) {
        Ok(c) => c.iter().map(|o| o.name().to_string()).collect(),
        Err(why) => return Outcome::unavailable(CONTROLLER_REF, &why),
    };
    // `trainlab start` created the starter's Controller; the learner's files need not hold it.
    if ctx.is_static() {
        controllers.push(starter.to_string());
    }
    let o = if controllers.iter().any(|c| c == name) {
        Outcome::pass(CONTROLLER_REF).expected_found(&found, &found)
    } else {
        let list = controllers.join(", ");
        Outcome::fail(CONTROLLER_REF, expected, found).with("controllers", dash(&list))
    };
    o.with("controller", starter).with("reference", name)
}

fn dash(s: &str) -> &str {
    if s.is_empty() {
        "—"
    } else {
        s
    }
}

fn partition(ns: &NodeSet) -> Outcome {
    let p = ns.spec.partition.as_ref().and_then(|p| p.enabled);
    let found = match p {
        Some(b) => format!("spec.partition.enabled: {b}"),
        None => "spec.partition.enabled: — (false)".to_string(),
    };
    let expected = "spec.partition.enabled: true";
    if ns.partition_enabled() {
        Outcome::pass(PARTITION).expected_found(expected, found)
    } else {
        Outcome::fail(PARTITION, expected, found).with("nodeset", NODESET)
    }
}

/// Placement is right when every node the pods may use is a GPU node of the type, and some are.
fn placement_check(t: &PodTemplate, gpu: &GpuType) -> Outcome {
    let want = &gpu.instance_type;
    let expected = format!("{INSTANCE_TYPE_LABEL}: {want}");
    if gpu.all.is_empty() {
        // Static mode: what the selector allows for the instance-type label.
        let found = |v: &str| format!("{INSTANCE_TYPE_LABEL}: {v}");
        return match placement::allowed_values(&t.spec, INSTANCE_TYPE_LABEL) {
            Allowed::Only(s) if s.len() == 1 && s.contains(want) => {
                Outcome::pass(PLACEMENT).expected_found(&expected, found(want))
            }
            Allowed::None => Outcome::fail(PLACEMENT, expected, found("—")).hint("no-nodes"),
            Allowed::Only(s) => {
                let v: Vec<&str> = s.iter().map(String::as_str).collect();
                Outcome::fail(PLACEMENT, expected, found(&v.join(", "))).with("nodes", v.join(", "))
            }
            Allowed::Any if constrained(t) => {
                Outcome::skipped(PLACEMENT, Reason::Message("placement-needs-nodes".into()))
            }
            Allowed::Any => Outcome::fail(PLACEMENT, expected, found("*")).hint("unrestricted"),
        };
    }
    if let Err(why) = &gpu.nodes {
        return unknown(why, PLACEMENT);
    }
    let usable: Vec<&NodeFacts> = gpu
        .all
        .iter()
        .filter(|n| placement::may_use(&t.spec, *n))
        .collect();
    let typed = |n: &&NodeFacts| {
        n.instance_type.as_deref() == Some(want.as_str()) && n.allocatable(GPU) > 0
    };
    let describe = |ns: &[&NodeFacts]| {
        let v: Vec<String> = ns
            .iter()
            .map(|n| format!("{} ({})", n.name, n.instance_type.as_deref().unwrap_or("—")))
            .collect();
        dash(&v.join(", ")).to_string()
    };
    let found = format!("nodes: {}", describe(&usable));
    if usable.is_empty() {
        return Outcome::fail(PLACEMENT, expected, found).hint("no-nodes");
    }
    let others: Vec<&NodeFacts> = usable.iter().copied().filter(|n| !typed(n)).collect();
    if others.is_empty() {
        return Outcome::pass(PLACEMENT).expected_found(expected, found);
    }
    Outcome::fail(PLACEMENT, expected, found).with("nodes", describe(&others))
}

/// Whether the template restricts placement at all (a selector or required node affinity).
fn constrained(t: &PodTemplate) -> bool {
    t.spec.node_selector.as_ref().is_some_and(|m| !m.is_empty())
        || placement::required_terms(&t.spec).is_some()
}

fn gpus(obj: &Obj, t: &PodTemplate, gpu: &GpuType) -> Result<Outcome, InputError> {
    // What the API server refuses in the pod the operator would create comes first.
    let refused = t
        .containers()
        .flat_map(|(c, path)| resources::validate_container(c, path))
        .find(|v| v.resource == GPU && v.rule != Rule::Unreadable);
    if let Some(v) = refused {
        let container = v.path.split(".resources.").next().unwrap_or(&v.path);
        let expected =
            format!("{container}.resources.limits[{GPU}] = {container}.resources.requests[{GPU}]");
        let found = format!("{}: {}", v.path, v.value.as_deref().unwrap_or("—"));
        return Ok(Outcome::fail(GPUS, expected, found)
            .hint("rejected")
            .with("field", &v.path)
            .with("api_error", v.api_server_text()));
    }
    let p = match &gpu.per_node {
        Ok(p) => *p,
        Err(why) => return Ok(unknown(why, GPUS)),
    };
    // The operator always puts slurmd first (views::slinky `NodeSet::pod_spec`).
    let Some((slurmd, path)) = t.containers().next() else {
        return Err(obj.field_error("spec.slurmd", "no slurmd container"));
    };
    let bad = |e: crate::quantity::QuantityError| obj.field_error(path, e);
    let mine = resources::effective_count(slurmd, GPU)
        .map_err(bad)?
        .unwrap_or(0);
    let pod = resources::pod_count(&t.spec, GPU).map_err(|e| obj.field_error(&t.path, e))?;
    let expected = format!("{path}.resources.limits[{GPU}]: {p}");
    let found = format!("{path}.resources.limits[{GPU}]: {mine}");
    let o = match mine {
        m if m == p => Outcome::pass(GPUS).expected_found(expected, found),
        0 if pod > 0 => Outcome::fail(GPUS, expected, found).hint("other-container"),
        0 => Outcome::fail(GPUS, expected, found).hint("none"),
        m if m > p => Outcome::fail(GPUS, expected, found).hint("too-many"),
        _ => Outcome::fail(GPUS, expected, found),
    };
    Ok(o.with("gpus", mine)
        .with("pod_gpus", pod)
        .with("gpus_per_node", p)
        .with("path", path))
}

fn replicas(ns: &NodeSet, gpu: &GpuType) -> Outcome {
    // The CRD's enum (`ScalingModeType`): the API server refuses any other value.
    if let Some(m) = ns.spec.scaling_mode.as_deref() {
        if ![SCALING_STATEFULSET, SCALING_DAEMONSET].contains(&m) {
            let expected = "spec.scalingMode: StatefulSet|DaemonSet";
            return Outcome::fail(REPLICAS, expected, format!("spec.scalingMode: {m}"))
                .hint("bad-scaling-mode")
                .with("value", m);
        }
    }
    if ns.is_daemonset_mode() {
        let mode = "spec.scalingMode: DaemonSet";
        return Outcome::pass(REPLICAS).expected_found(mode, mode);
    }
    let n = match &gpu.count {
        Ok(n) => *n,
        Err(why) => return unknown(why, REPLICAS),
    };
    let (r, written) = ns.replicas();
    let expected = format!("spec.replicas: {n}");
    let found = if written {
        format!("spec.replicas: {r}")
    } else {
        format!("spec.replicas: — ({r})")
    };
    let names = match &gpu.nodes {
        Ok(v) => v
            .iter()
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => format!("--param nodes={n}"),
    };
    let o = match r {
        r if r == n => Outcome::pass(REPLICAS).expected_found(expected, found),
        r if r > n => Outcome::fail(REPLICAS, expected, found).hint("too-many"),
        _ => Outcome::fail(REPLICAS, expected, found),
    };
    o.with("replicas", r)
        .with("nodes", n)
        .with("node_names", names)
}

/// Slurm itself sees the nodes: the operator counts the NodeSet's pods in each Slurm node
/// state (`slurmIdle`, `slurmAllocated`: up and usable; `slurmDown`, `slurmDrain`: not).
fn registered(ns: &NodeSet, r: &Rollout) -> Outcome {
    let st = ns.status.clone().unwrap_or_default();
    let n = |v: Option<i32>| i64::from(v.unwrap_or(0));
    let (idle, alloc) = (n(st.slurm_idle), n(st.slurm_allocated));
    let (down, drain) = (n(st.slurm_down), n(st.slurm_drain));
    let expected = format!("status.slurmIdle + status.slurmAllocated: {}", r.desired);
    let found = format!(
        "status.slurmIdle: {idle}, status.slurmAllocated: {alloc}, status.slurmDown: {down}, status.slurmDrain: {drain}"
    );
    let up = idle + alloc;
    let o = if up >= r.desired && r.desired > 0 {
        Outcome::pass(REGISTERED)
    } else if down + drain > 0 {
        return Outcome::fail(REGISTERED, expected, found)
            .hint("down")
            .with("down", down)
            .with("drain", drain)
            .with("nodeset", NODESET);
    } else if r.ready < r.desired {
        Outcome::pending(REGISTERED, Reason::Message("pods-not-ready".into()))
    } else {
        Outcome::pending(REGISTERED, Reason::Message("registering".into()))
    };
    o.expected_found(expected, found)
        .with("up", up)
        .with("desired", r.desired)
        .with("ready", r.ready)
        .with("nodeset", NODESET)
}

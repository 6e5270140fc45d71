//! Lab `efa-nccl`: two pods that run NCCL over EFA, one per EFA node. `nccl-efa` is a `batch/v1`
//! Indexed Job (kind: each pod is a rank) or a `kubeflow.org/v2beta1` MPIJob whose Launcher
//! runs mpirun across two Workers (EKS: a real all-reduce, as aws-samples/awsome-distributed-
//! training `micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml` runs nccl-tests).
//!
//! - Spec checks judge the template whose pods run NCCL (`ranks`: the Job's; the MPIJob's
//!   Worker) and its training container: the first naming nvidia.com/gpu, else the first.
//! - `efa-count` and `gpus-whole-node` compare against the instance types that template allows
//!   (kit `devices::judged_types`: else the bound nodes' types, else `--param instance_type`),
//!   so a missing type fails one check, not three.
//! - `fi-provider` grades that nothing steers NCCL off EFA (`efa::steers_off`: an
//!   `FI_PROVIDER` filter without `efa`, `NCCL_NET` forcing NCCL's own `Socket`/`IB`) in what the
//!   ranks see (`rank_env`): the container's env or its command line (`export
//!   FI_PROVIDER=efa`, as the quiz writes it); in an MPIJob only what mpirun exports.
//! - `single-zone` accepts any one-zone arrangement: the pods' own (kit
//!   `spread::template_keeps_one_zone`), or a NodePool or node group kept to one zone that they
//!   select (kit `zones::confined`, over the NodePools read cluster-wide as lab 15 reads them;
//!   static mode sees only those in the files).
//! - State checks follow the pods by ownerReference uid (`ranks`): the Job's pods, or the
//!   MPIJob's Workers (the Launcher's pod belongs to its own Job). An unschedulable pod fails
//!   `pods-running` only when its own constraints keep it off every node (kit
//!   `spread::fits_nowhere`; on EKS, no allowed instance type can hold it).

mod efa;
mod rank_env;
mod ranks;

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Container;

use crate::facts::instances::{self, EFA, GPU, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use crate::facts::NodeFacts;
use crate::observe::kinds::{CONFIGMAPS, JOBS, MPIJOBS, NODEPOOLS, PODS};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::cmdline::EnvLookup;
use crate::verify::kit::k8s::container;
use crate::verify::kit::k8s::placement::{self, Allowed};
use crate::verify::kit::k8s::pods::{self, JobEnd, Standing};
use crate::verify::kit::k8s::workload::{PodTemplate, Workload, WorkloadKind};
use crate::verify::kit::nodes::devices::{self, PerType};
use crate::verify::kit::nodes::spread::{self, OneZone, Zones};
use crate::verify::kit::nodes::zones::{self, Confined};
use crate::verify::{
    Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Status, Verifier,
};
use efa::{OffEfa, EFA_PROVIDER, FI_PROVIDER, NCCL_NET};
use rank_env::{RankEnv, RanksSee};
use ranks::RankPod;

pub struct EfaNccl;

static JOBS_READ: Read = Read::lab(&JOBS);
static MPIJOBS_READ: Read = Read::lab(&MPIJOBS);
static PODS_READ: Read = Read::lab(&PODS);
static CONFIGMAPS_READ: Read = Read::lab(&CONFIGMAPS);
// Cluster-scoped, as lab 15 reads them: a NodePool may be what keeps the pods in one zone.
static NODEPOOLS_READ: Read = Read::cluster(&NODEPOOLS);
static READS: &[&Read] = &[
    &JOBS_READ,
    &MPIJOBS_READ,
    &PODS_READ,
    &CONFIGMAPS_READ,
    &NODEPOOLS_READ,
];

const NAME: &str = "nccl-efa";
/// Two pods, one per node.
const PODS_WANTED: i64 = 2;
const CHECKS: &[&str] = &[
    "efa-in-limits",
    "efa-count",
    "gpus-whole-node",
    "fi-provider",
    "efa-instance-type",
    "single-zone",
    "pods-on-efa-nodes",
    "pods-same-zone",
    "pods-running",
];

impl Verifier for EfaNccl {
    fn lab_id(&self) -> &'static str {
        "efa-nccl"
    }
    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }
    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        // The Job, else an MPIJob of that name. A cluster without the MPI Operator serves no
        // MPIJobs: then only the Job counts; any other failed read leaves the lab ungraded.
        let obj = match ctx.named(&JOBS_READ, NAME, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(missing) => match ctx.list(&MPIJOBS_READ) {
                Ok(objs) => match objs.into_iter().find(|o| o.name() == NAME) {
                    Some(o) => o,
                    None => return Ok(missing),
                },
                Err(Unavailable::NotServed { .. }) => return Ok(missing),
                Err(why) if missing.outcomes.iter().all(|o| o.status == Status::Fail) => {
                    return Ok(Judgement::every(CHECKS, |c| Outcome::unavailable(c, &why)));
                }
                Err(_) => return Ok(missing),
            },
        };
        let lab = Lab::read(ctx, obj)?;
        let mut j = Judgement::default();
        j.push(lab.efa_in_limits());
        j.push(lab.efa_count(ctx));
        j.push(lab.gpus_whole_node(ctx)?);
        let fi = lab.fi_provider(&mut j)?;
        j.push(fi);
        j.push(lab.efa_instance_type(ctx.params.require("instance_type")?));
        j.push(lab.single_zone()?);
        j.push(lab.pods_on_efa_nodes());
        j.push(lab.pods_same_zone());
        j.push(lab.pods_running(ctx));
        lab.advise(&mut j);
        Ok(j)
    }
}

struct Lab<'a> {
    wl: Workload<'a>,
    /// Index of the template whose pods run NCCL.
    rank: usize,
    namespace: String,
    configmaps: Result<Vec<&'a Obj>, Unavailable>,
    /// The NCCL pods that are not terminating, one per rank.
    pods: Result<Vec<RankPod>, Unavailable>,
    nodes: Result<&'a [NodeFacts], Unavailable>,
    /// The NodePools that could be read and parsed, by name (none without Karpenter's CRDs).
    /// Read, not parsed: kit `zones::confined` parses only the pools the pods select.
    pools: Vec<&'a Obj>,
    end: JobEnd,
}

/// The node pairs of the state checks, or the outcome that stands in for them.
type Bound<'l> = Result<Vec<(&'l RankPod, &'l NodeFacts)>, Box<Outcome>>;

impl<'a> Lab<'a> {
    fn read(ctx: &JudgeCtx<'a>, obj: &'a Obj) -> Result<Lab<'a>, InputError> {
        let wl = Workload::from_obj(obj)?
            .ok_or_else(|| obj.field_error("kind", "expected a batch/v1 Job or an MPIJob"))?;
        let Some(rank) = ranks::rank_template(&wl) else {
            return Err(obj.field_error("spec", "no pod template that runs NCCL"));
        };
        // A pod needs a container ("Required value", core/v1 PodSpec validation).
        if wl.templates[rank].spec.containers.is_empty() {
            let path = wl.templates[rank].field("containers");
            return Err(obj.field_error(path, "must have at least one container"));
        }
        let pods = match ctx.list(&PODS_READ) {
            Err(u) => Err(u),
            Ok(all) => Ok(ranks::rank_pods(&wl, &all)?),
        };
        let nodes = ctx.node_facts()?.map_err(Unavailable::clone);
        // Context, not the lab's object: a pool that does not parse is lab 15's to report.
        let pools = ctx.list(&NODEPOOLS_READ).unwrap_or_default();
        Ok(Lab {
            pools,
            end: JobEnd::of(&wl)?,
            wl,
            rank,
            namespace: ctx.target.namespace.clone(),
            configmaps: ctx.list(&CONFIGMAPS_READ),
            pods,
            nodes,
        })
    }

    fn tpl(&self) -> &PodTemplate {
        &self.wl.templates[self.rank]
    }

    /// The training container and its field path (`read` made sure there is one).
    fn container(&self) -> (&Container, &str) {
        let t = self.tpl();
        let gpu = |c: &Container| devices::mentions(c, GPU);
        container::pick(t, &[&gpu]).unwrap_or((&t.spec.containers[0], &t.path))
    }

    /// `job/nccl-efa` or `mpijob/nccl-efa`, as kubectl names it.
    fn object(&self) -> String {
        format!("{}/{NAME}", self.wl.kind.kind().to_lowercase())
    }

    /// The evidence every hint may name.
    fn ev(&self, o: Outcome) -> Outcome {
        o.with("namespace", &self.namespace)
            .with("object", self.object())
            .with("selector", ranks::selector(&self.wl))
            .with("placement", &self.tpl().path)
    }

    fn fail(&self, check: &str, expected: impl Into<String>, found: impl Into<String>) -> Outcome {
        self.ev(Outcome::fail(check, expected, found))
    }

    // --- spec checks ---------------------------------------------------------------------------

    fn efa_in_limits(&self) -> Outcome {
        const ID: &str = "efa-in-limits";
        // The object's version is judged here, the first check that reads it.
        if !self.wl.uses_current_version() {
            let (served, found) = (self.wl.kind.api_version(), self.wl.api_version());
            return (self.fail(ID, &served, found).hint("api-version"))
                .with("kind", self.wl.kind.kind())
                .with("served", served)
                .with("found", found);
        }
        if let Some(v) = devices::violations(&self.wl, EFA).first() {
            return self.ev(devices::refused(ID, &self.wl, v));
        }
        let (c, path) = self.container();
        if devices::in_limits(c, EFA) {
            return Outcome::pass(ID);
        }
        let expected = format!("{path}.resources.limits[{EFA}]");
        let other =
            (self.wl.containers()).find(|(_, o, p)| *p != path && devices::mentions(o, EFA));
        match other {
            Some((_, _, op)) => (self.fail(ID, expected, format!("{op}.resources.limits[{EFA}]")))
                .hint("other-container")
                .with("path", path)
                .with("other", op),
            None => self.fail(ID, expected, "—").with("path", path),
        }
    }

    /// The instance types EFA and GPU counts are judged against, and where they came from.
    fn judged_types(&self, ctx: &JudgeCtx) -> Option<(BTreeSet<String>, String)> {
        let on = match (&self.pods, &self.nodes) {
            (Ok(p), Ok(n)) => spread::on_nodes(p, n),
            _ => Vec::new(),
        };
        let bound: Vec<_> = on.iter().map(|(_, n)| *n).collect();
        devices::judged_types(self.tpl(), &bound, ctx.params.get("instance_type"))
    }

    fn efa_count(&self, ctx: &JudgeCtx) -> Outcome {
        const ID: &str = "efa-count";
        let (c, path) = self.container();
        let Some((types, from)) = self.judged_types(ctx) else {
            return Outcome::skipped(ID, Reason::NeedsParam("instance_type".into()));
        };
        let per = PerType::of(&types, |i| i.efa);
        let unknown = per.unknown().join(", ");
        if !unknown.is_empty() {
            let known: Vec<&str> = instances::INSTANCES.iter().map(|i| i.name).collect();
            let show = |t: &str| format!("{INSTANCE_TYPE_LABEL}: {t}");
            return (self.fail(ID, show(&known.join(", ")), show(&unknown)))
                .hint("unknown-type")
                .with("unknown", unknown)
                .with("known_types", known.join(", "));
        }
        let found = format!("{EFA}: {}", devices::count_text(c, EFA));
        let Some(want) = per.agreed() else {
            let each = per.describe();
            return (self.fail(ID, format!("{EFA}: {each}"), found))
                .hint("mixed-types")
                .with("counts", each);
        };
        let names = join(&types);
        let o = if devices::count_of(c, EFA) == Some(i64::from(want)) {
            Outcome::pass(ID)
        } else {
            self.fail(ID, format!("{EFA}: {want} ({names})"), found)
        };
        o.with("instance_type", names)
            .with("efa_expected", want)
            .with("path", path)
            .with("type_from", from)
    }

    fn gpus_whole_node(&self, ctx: &JudgeCtx) -> Result<Outcome, InputError> {
        const ID: &str = "gpus-whole-node";
        let param = Params::number(Some(ctx.params.require("gpus")?), "gpus")?.unwrap_or_default();
        if let Some(v) = devices::violations(&self.wl, GPU).first() {
            let o = self.ev(devices::refused(ID, &self.wl, v));
            return Ok(o.with("gpus_expected", param));
        }
        let (c, path) = self.container();
        let types = self.judged_types(ctx).map(|(t, _)| t).unwrap_or_default();
        let per = PerType::of(&types, |i| i.gpus);
        let gpuless = per.lacking().join(", ");
        if !gpuless.is_empty() {
            let gpu_types = instances::efa_gpu_types().join(", ");
            let show = |t: &str| format!("{INSTANCE_TYPE_LABEL}: {t}");
            return Ok((self.fail(ID, show(&gpu_types), show(&gpuless)))
                .hint("no-gpus-on-type")
                .with("gpuless", gpuless)
                .with("gpu_types", gpu_types));
        }
        // A whole node: the table's GPU count when every judged type is known and agrees.
        let want = per.agreed().unwrap_or(param);
        let o = if devices::count_of(c, GPU) == Some(i64::from(want)) {
            Outcome::pass(ID)
        } else {
            let found = format!("{GPU}: {}", devices::count_text(c, GPU));
            self.fail(ID, format!("{GPU}: {want}"), found)
        };
        Ok(o.with("gpus_expected", want).with("path", path))
    }

    /// Nothing steers NCCL's ranks off EFA (`efa::steers_off` on what the ranks see, kit
    /// `rank_env::ranks_see`: in an MPIJob, what the Launcher's mpirun exports). FI_PROVIDER
    /// unset passes with the advice aws-ofi-nccl <= 1.5.0 needs; a value the grader cannot read
    /// is skipped, not failed.
    fn fi_provider(&self, j: &mut Judgement) -> Result<Outcome, InputError> {
        const ID: &str = "fi-provider";
        let cm = rank_env::config_maps(&self.configmaps);
        let see = |name| rank_env::ranks_see(&self.wl, self.container(), name, &cm);
        let mpi = self.wl.kind == WorkloadKind::MpiJob;
        let shown = |name: &str, v: &str| {
            if mpi {
                format!("mpirun -x {name}={v}")
            } else {
                format!("{name}={v}")
            }
        };
        let expected = format!(
            "{} | {}; {NCCL_NET} ∉ {{Socket, IB}}",
            shown(FI_PROVIDER, "—"),
            shown(FI_PROVIDER, EFA_PROVIDER)
        );
        let mut values: Vec<Option<String>> = Vec::new();
        let mut at = String::new();
        for name in [FI_PROVIDER, NCCL_NET] {
            match see(name)? {
                RanksSee::NoMpirun { path, command } => {
                    return Ok((self.fail(ID, expected, &command).hint("no-mpirun"))
                        .with("path", path)
                        .with("command", command));
                }
                RanksSee::Seen {
                    value: EnvLookup::Unresolved(_),
                    path,
                    source,
                } => {
                    let o = Outcome::skipped(ID, Reason::Message("env-unresolved".into()));
                    return Ok(o
                        .with("variable", name)
                        .with("source", source.unwrap_or_default())
                        .with("path", path));
                }
                RanksSee::Seen { value, path, .. } => {
                    at = path;
                    values.push(match value {
                        EnvLookup::Value(v) => Some(v),
                        _ => None,
                    });
                }
            }
        }
        let (fi, net) = (values[0].as_deref(), values[1].as_deref());
        let set: Vec<String> = [(FI_PROVIDER, fi), (NCCL_NET, net)]
            .iter()
            .filter_map(|(n, v)| Some(shown(n, (*v)?)))
            .collect();
        let found = if set.is_empty() {
            shown(FI_PROVIDER, "—")
        } else {
            set.join("; ")
        };
        let o = match efa::steers_off(fi, net) {
            Some(OffEfa::Provider(v)) => (self.fail(ID, expected, found).hint("wrong-value"))
                .with("value", v)
                .with("variable", FI_PROVIDER),
            Some(OffEfa::NcclNet(v)) => (self.fail(ID, expected, found).hint("nccl-net"))
                .with("value", v)
                .with("variable", NCCL_NET),
            None => {
                if fi.is_none() {
                    j.advise(Advice::new("fi-provider-legacy").with("path", &at));
                }
                Outcome::pass(ID).expected_found(expected, found)
            }
        };
        Ok(o.with("path", at))
    }

    /// `example`: the instance type a hint suggests (lab.yaml `instance_type`).
    fn efa_instance_type(&self, example: &str) -> Outcome {
        const ID: &str = "efa-instance-type";
        let efa_types = instances::efa_gpu_types().join(", ");
        let expected = format!("{INSTANCE_TYPE_LABEL}: {efa_types}");
        let found = |v: &str| format!("{INSTANCE_TYPE_LABEL}: {v}");
        match placement::allowed_values(&self.tpl().spec, INSTANCE_TYPE_LABEL) {
            Allowed::Any => (self.fail(ID, expected, found("—")))
                .with("efa_types", efa_types)
                .with("instance_type", example),
            Allowed::None => self.fail(ID, expected, found("∅")).hint("contradictory"),
            Allowed::Only(set) => {
                let not_efa = efa::not_efa(&set).join(", ");
                if not_efa.is_empty() {
                    return Outcome::pass(ID).with("instance_type", join(&set));
                }
                (self.fail(ID, expected, found(&not_efa)))
                    .hint("not-efa")
                    .with("not_efa", not_efa)
                    .with("efa_types", efa_types)
            }
        }
    }

    fn single_zone(&self) -> Result<Outcome, InputError> {
        const ID: &str = "single-zone";
        let expected = format!("{ZONE_LABEL}: <zone>");
        let found = |v: &str| format!("{ZONE_LABEL}: {v}");
        let t = self.tpl();
        let labels = ranks::pod_labels(&self.wl, t);
        let at = t.field("affinity.podAffinity");
        let how = spread::template_keeps_one_zone(&t.spec, &labels, &self.namespace)
            .map_err(|e| self.wl.obj.field_error(&at, e))?;
        if matches!(how, OneZone::Pinned(_) | OneZone::PodAffinity) {
            return Ok(match how {
                OneZone::Pinned(zone) => Outcome::pass(ID).with("zone", zone),
                _ => Outcome::pass(ID),
            });
        }
        // A NodePool or node group kept in one zone (lab 15's arrangement) confines the pods
        // too; it decides whenever the pod spec itself names no zone.
        let unpinned = matches!(how, OneZone::Unconstrained | OneZone::PreferredOnly);
        match self.confined() {
            Confined::OneZone { zone, by } => {
                return Ok(Outcome::pass(ID)
                    .expected_found(&expected, format!("{by} → {}", found(&zone)))
                    .with("zone", zone)
                    .with("by", by));
            }
            Confined::Several { by, zones } if unpinned => {
                let listed = if zones.is_empty() {
                    "*".to_string()
                } else {
                    zones.join(", ")
                };
                return Ok(
                    (self.fail(ID, expected, format!("{by} → {}", found(&listed))))
                        .hint("pool-zones")
                        .with("by", by)
                        .with("zones", listed),
                );
            }
            Confined::Unseen { by } if unpinned => {
                let o = Outcome::skipped(ID, Reason::Message("zone-pool-unseen".into()));
                return Ok(o.with("by", by));
            }
            _ => {}
        }
        Ok(match how {
            OneZone::Several(set) => (self.fail(ID, expected, found(&join(&set))))
                .hint("several-zones")
                .with("zones", join(&set)),
            OneZone::Contradictory => self.fail(ID, expected, found("∅")).hint("contradictory"),
            OneZone::AffinityOnOthers(sels) => {
                let own: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                (self.fail(ID, expected, format!("{at}: {}", sels.join("; "))))
                    .hint("affinity-other-pods")
                    .with("labels", own.join(", "))
                    .with("own_label", ranks::selector(&self.wl))
            }
            OneZone::PreferredOnly => {
                let found = "preferredDuringSchedulingIgnoredDuringExecution";
                self.fail(ID, expected, found).hint("preferred-only")
            }
            _ => self.fail(ID, expected, found("—")),
        })
    }

    /// Whether the NodePools or node groups the NCCL template selects keep it in one zone (kit
    /// `zones::confined`, over the pools and nodes that could be read).
    fn confined(&self) -> Confined {
        let nodes: Vec<&NodeFacts> = match &self.nodes {
            Ok(n) => n.iter().collect(),
            Err(_) => Vec::new(),
        };
        zones::confined(&self.tpl().spec, &self.pools, &nodes)
    }

    // --- state checks --------------------------------------------------------------------------

    /// Gate of the node-based checks: every expected pod exists and is bound to a listed node.
    fn bound(&self, check: &str) -> Bound<'_> {
        let (pods, nodes) = match (&self.pods, &self.nodes) {
            (Err(why), _) | (_, Err(why)) => {
                return Err(Box::new(Outcome::unavailable(check, why)))
            }
            (Ok(p), Ok(n)) => (p, n),
        };
        let expected = ranks::at_once(&self.wl, self.tpl());
        let done = matches!(self.end, JobEnd::Complete { .. });
        spread::bound(pods, nodes, expected, done)
            .map_err(|g| Box::new(g.outcome(check).with("object", self.object())))
    }

    fn pods_on_efa_nodes(&self) -> Outcome {
        const ID: &str = "pods-on-efa-nodes";
        let bound = match self.bound(ID) {
            Ok(b) => b,
            Err(o) => return *o,
        };
        let (want, bad) = spread::short_of(&bound, EFA, |p: &RankPod| p.count(EFA));
        if bad.is_empty() {
            return Outcome::pass(ID);
        }
        let bad = bad.join("; ");
        self.fail(ID, format!("{EFA} ≥ {want}"), &bad)
            .with("bad", bad)
    }

    fn pods_same_zone(&self) -> Outcome {
        const ID: &str = "pods-same-zone";
        let bound = match self.bound(ID) {
            Ok(b) => b,
            Err(o) => return *o,
        };
        match spread::zones(&bound) {
            Zones::One(zone) => Outcome::pass(ID).with("zone", zone),
            Zones::Apart(placed) => {
                (self.fail(ID, format!("{ZONE_LABEL}: <zone>"), &placed)).with("zones", placed)
            }
            Zones::Unlabelled(node) => {
                Outcome::skipped(ID, Reason::Message("no-zone-label".into())).with("node", node)
            }
        }
    }

    fn pods_running(&self, ctx: &JudgeCtx) -> Outcome {
        const ID: &str = "pods-running";
        if let Some(s) = ranks::shape_problem(&self.wl, PODS_WANTED) {
            return self.fail(ID, s.expected, s.found).hint(s.hint);
        }
        if let JobEnd::Failed {
            reason, message, ..
        } = &self.end
        {
            let success = pods::success_condition(self.wl.kind).unwrap_or("Complete");
            let found = format!("Failed=True ({reason})");
            return (self
                .fail(ID, format!("{success}=True"), found)
                .hint("job-failed"))
            .with("reason", reason)
            .with("message", message);
        }
        // The controller writes the success condition once every pod succeeded; they may be gone.
        if matches!(self.end, JobEnd::Complete { .. }) {
            return Outcome::pass(ID);
        }
        let pods = match &self.pods {
            Err(why) => return Outcome::unavailable(ID, why),
            Ok(p) => p,
        };
        let (mut pending, mut starting) = (None, Vec::new());
        let by_rank = |r: u32| pods.iter().find(|p| p.rank == Some(r));
        let present: Vec<&RankPod> = (0..PODS_WANTED as u32).filter_map(by_rank).collect();
        for p in &present {
            let name = &p.state.name;
            let msg = |id: &str| Outcome::pending(ID, Reason::Message(id.into())).with("pod", name);
            match p.standing(|p| self.fits_nowhere(p, ctx)) {
                Standing::Up => {}
                Standing::Stuck {
                    container,
                    reason,
                    message,
                } => {
                    let found = format!("{name}/{container}: {reason}");
                    return (self.fail(ID, "Running", found).hint("container-waiting"))
                        .with("pod", name)
                        .with("container", container)
                        .with("reason", reason)
                        .with("message", message);
                }
                Standing::Unschedulable(said) => {
                    let found = format!("{name}: PodScheduled=False (Unschedulable)");
                    return (self
                        .fail(ID, "PodScheduled=True", found)
                        .hint("unschedulable"))
                    .with("pod", name)
                    .with("scheduler_message", said);
                }
                Standing::Retrying => {
                    let failed = self.wl.obj.value["status"]["failed"].as_i64().unwrap_or(1);
                    pending.get_or_insert(msg("retrying").with("failed", failed));
                }
                Standing::WaitingCapacity(said) => {
                    pending.get_or_insert(msg("waiting-capacity").with("scheduler_message", said));
                }
                Standing::Starting => starting.push(name.clone()),
            }
        }
        if let Some(o) = pending {
            return o;
        }
        if present.len() < PODS_WANTED as usize {
            return (Outcome::pending(ID, Reason::Message("no-pods".into())))
                .with("found", present.len())
                .with("expected", PODS_WANTED)
                .with("object", self.object());
        }
        if !starting.is_empty() {
            let o = Outcome::pending(ID, Reason::Message("creating".into()));
            return o.with("pods", starting.join(", "));
        }
        Outcome::pass(ID)
    }

    /// Whether the pod's own constraints keep it off every node (see the module comment).
    fn fits_nowhere(&self, p: &RankPod, ctx: &JudgeCtx) -> bool {
        let Ok(nodes) = &self.nodes else { return false };
        spread::fits_nowhere(&p.spec, &p.requests, nodes, ctx.profile)
    }

    // --- advice ---------------------------------------------------------------------------------

    /// What the aws-ofi-nccl EFA Cheatsheet discourages (`efa::discouraged`), as each
    /// container's program sees it or, in an MPIJob, as mpirun exports it.
    fn advise(&self, j: &mut Judgement) {
        let cm = rank_env::config_maps(&self.configmaps);
        let mpi = self.wl.kind == WorkloadKind::MpiJob;
        for (_, c, _) in self.wl.containers() {
            // A command line the shell reader cannot follow is fi-provider's to report.
            let value = |name: &str| match rank_env::rank_env(c, name, &cm) {
                Ok(RankEnv::Exported(v)) if mpi => v,
                _ => rank_env::program_env(c, name, &cm),
            };
            for id in efa::discouraged(value) {
                j.advise(Advice::new(id).with("container", &c.name));
            }
        }
    }
}

fn join(set: &BTreeSet<String>) -> String {
    set.iter().cloned().collect::<Vec<_>>().join(", ")
}

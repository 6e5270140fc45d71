//! Lab `fsx-lustre` (quiz 8): a StorageClass `fsx-lustre` for the FSx for Lustre CSI driver
//! (PERSISTENT_2, a valid per-unit throughput, one subnet and its security groups), a claim
//! `training-data` that several pods share (ReadWriteMany, a size FSx accepts), and a Job
//! `fsx-readers` whose pods run at the same time and mount it.
//!
//! Spec checks read the three objects as written (also with `--files`); any arrangement with
//! those properties passes (2400Gi or 4800Gi, 250 or 1000 MB/s/TiB, `parallelism: 2` or an
//! Indexed Job, the claim at any path). State checks need the driver (`fsx-csi`), so kind skips
//! them; pods are the Job's by ownerReference uid, events an object's by `involvedObject.uid`.
//! Driver and FSx facts, with sources, are in `facts::fsx`; the storage rules only this lab
//! needs (PVC, StorageClass, CSI) in `storage` beside it.

mod storage;

use crate::facts::fsx::{self, Asked, DeploymentType, Storage, GIB, PROVISIONER};
use crate::observe::kinds::{EVENTS, JOBS, PODS, PVCS, STORAGECLASSES};
use crate::observe::{InputError, Obj};
use crate::verify::kit::k8s::pods::{self, JobEnd};
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::kit::training::job;
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Read, Reason, Status, Verifier};
use storage::{Claim, ClaimUse, StorageClass};

pub struct FsxLustre;

static SC_READ: Read = Read::cluster(&STORAGECLASSES);
static PVC_READ: Read = Read::lab(&PVCS);
static JOB_READ: Read = Read::lab(&JOBS);
static POD_READ: Read = Read::lab(&PODS);
static EVENT_READ: Read = Read::lab(&EVENTS);
static READS: &[&Read] = &[&SC_READ, &PVC_READ, &JOB_READ, &POD_READ, &EVENT_READ];

/// The StorageClass the task asks for; workshops prefix cluster-scoped names.
const CLASS_BASE: &str = "fsx-lustre";
const PVC: &str = "training-data";
const JOB: &str = "fsx-readers";

const PROVISIONER_CHECK: &str = "fsx-provisioner";
const DEPLOYMENT: &str = "deployment-type";
const NETWORK: &str = "network-params";
const PVC_SIZE: &str = "pvc-rwx-size";
const MOUNT: &str = "pods-mount-claim";
const BOUND: &str = "pvc-bound";
const RUNNING: &str = "pods-running";
#[rustfmt::skip]
const CHECKS: &[&str] = &[PROVISIONER_CHECK, DEPLOYMENT, NETWORK, PVC_SIZE, MOUNT, BOUND, RUNNING];

/// The lab's deployment type (its throughputs are in `facts::fsx`).
const TARGET: DeploymentType = DeploymentType::Persistent2;

impl Verifier for FsxLustre {
    fn lab_id(&self) -> &'static str {
        "fsx-lustre"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let mut j = Judgement::default();
        let class_name = ctx.target.cluster_name(CLASS_BASE);
        let class_checks = [PROVISIONER_CHECK, DEPLOYMENT, NETWORK];
        let class = match ctx.named(&SC_READ, &class_name, &class_checks) {
            Named::Found(o) => Some(StorageClass::read(o)?),
            Named::Absent(a) => absent(&mut j, a),
        };
        if let Some(c) = &class {
            j.push(provisioner(c));
            j.push(deployment(c));
            j.push(network(c, ctx));
            advise(&mut j, c);
        }
        let claim = match ctx.named(&PVC_READ, PVC, &[PVC_SIZE, BOUND]) {
            Named::Found(o) => Some((o, Claim::from_obj(o)?)),
            Named::Absent(a) => absent(&mut j, a),
        };
        if let Some((_, c)) = &claim {
            j.push(pvc_rwx_size(c, class.as_ref(), &class_name));
        }
        let job = match ctx.named(&JOB_READ, JOB, &[MOUNT, RUNNING]) {
            Named::Found(o) => Workload::from_obj(o)?,
            Named::Absent(a) => absent(&mut j, a),
        };
        if let Some(w) = &job {
            j.push(mount_claim(w));
        }
        // Static mode: the framework skips the state checks (NeedsLiveCluster).
        if ctx.is_static() {
            return Ok(j);
        }
        let events = ctx.list(&EVENT_READ).unwrap_or_default();
        if let Some((o, c)) = &claim {
            let bound = pvc_bound(ctx, o, c, &j, &events);
            j.push(bound);
        }
        if let Some(w) = &job {
            let o = pods_running(ctx, w, j.get(BOUND).map(|o| o.status), &events)?;
            j.push(o);
        }
        Ok(j)
    }
}

/// Keeps the outcomes of a missing object: there is nothing else to judge about it.
fn absent<T>(j: &mut Judgement, a: Judgement) -> Option<T> {
    j.outcomes.extend(a.outcomes);
    None
}

fn or_dash(v: Option<&str>) -> &str {
    v.filter(|s| !s.is_empty()).unwrap_or("—")
}

/// `a,b` (joined with `sep`), or `none` for nothing.
fn joined<S: AsRef<str>>(v: &[S], sep: &str, none: &str) -> String {
    let v: Vec<&str> = v.iter().map(AsRef::as_ref).collect();
    if v.is_empty() {
        none.to_string()
    } else {
        v.join(sep)
    }
}

// ---------------------------------------------------------------------------------------------
// The StorageClass

fn provisioner(c: &StorageClass) -> Outcome {
    let served = STORAGECLASSES.api_version();
    if c.obj.api_version() != served {
        return Outcome::fail(
            PROVISIONER_CHECK,
            format!("apiVersion: {served}"),
            format!("apiVersion: {}", c.obj.api_version()),
        )
        .hint("api-version")
        .with("found_api_version", c.obj.api_version())
        .with("api_version", served);
    }
    if let Some((key, go_type, value)) = c.not_string() {
        return Outcome::fail(
            PROVISIONER_CHECK,
            format!("parameters.{key}: \"{value}\""),
            format!("parameters.{key}: {value}"),
        )
        .hint("not-string")
        .with("param", key)
        .with("value", value)
        .with("type", go_type);
    }
    let expected = format!("provisioner: {PROVISIONER}");
    let written = or_dash(c.provisioner.as_deref());
    let found = format!("provisioner: {written}");
    if written == PROVISIONER {
        return Outcome::pass(PROVISIONER_CHECK).expected_found(expected, found);
    }
    Outcome::fail(PROVISIONER_CHECK, expected, found)
        .with("provisioner", written)
        .with("class", c.obj.name())
}

fn deployment(c: &StorageClass) -> Outcome {
    let valid = TARGET.throughputs(false);
    let shown: Vec<String> = valid.iter().map(i64::to_string).collect();
    let dt = c.text("deploymentType").filter(|s| !s.is_empty());
    let tp = c.text("perUnitStorageThroughput").filter(|s| !s.is_empty());
    let target = TARGET.as_str();
    let expected = format!(
        "deploymentType: {target}, perUnitStorageThroughput: {}",
        shown.join(" | ")
    );
    let found = format!(
        "deploymentType: {}, perUnitStorageThroughput: {}",
        or_dash(dt),
        or_dash(tp)
    );
    let dt_shown = dt.unwrap_or(DeploymentType::DEFAULT.as_str());
    let fail = |hint: Option<&str>| {
        let o = Outcome::fail(DEPLOYMENT, expected.clone(), found.clone())
            .with("deployment_type", dt_shown)
            .with("throughput", or_dash(tp))
            .with("throughputs", shown.join(", "));
        hint.map_or(o.clone(), |h| o.hint(h))
    };
    match (dt, tp) {
        (None, _) => return fail(Some("unset")),
        (Some(d), _) if d != target => return fail(None),
        (_, None) => return fail(Some("no-throughput")),
        (_, Some(t)) if !t.parse::<i64>().is_ok_and(|n| valid.contains(&n)) => {
            return fail(Some("throughput"))
        }
        _ => {}
    }
    let s3: Vec<(&str, &str)> = fsx::S3_PARAMS
        .iter()
        .filter_map(|k| Some((*k, c.text(k)?)))
        .collect();
    if !s3.is_empty() {
        let pairs: Vec<String> = s3.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let keys: Vec<&str> = s3.iter().map(|(k, _)| *k).collect();
        return Outcome::fail(
            DEPLOYMENT,
            format!("deploymentType: {target}; {}: —", fsx::S3_PARAMS.join(", ")),
            format!("deploymentType: {target}; {}", pairs.join(", ")),
        )
        .hint("s3-link")
        .with("params", keys.join(", "));
    }
    Outcome::pass(DEPLOYMENT).expected_found(expected, found)
}

fn network<'a>(c: &'a StorageClass, ctx: &'a JudgeCtx) -> Outcome {
    let subnet = c.text("subnetId").filter(|s| !s.is_empty());
    // Split as the driver does: on commas, nothing trimmed.
    let split = |v: Option<&'a str>| v.filter(|s| !s.is_empty()).map(|s| s.split(','));
    let groups: Vec<&str> = split(c.text("securityGroupIds")).map_or(vec![], Iterator::collect);
    // `--param` values stand for the learner's VPC only when they are real ids.
    let given = |k: &str, kind: &str| -> Vec<&'a str> {
        let ids = split(ctx.params.given(k)).map(|i| i.filter(|g| fsx::is_ec2_id(g, kind)));
        ids.map_or(vec![], Iterator::collect)
    };
    let want_subnet = given("subnet_id", "subnet").first().copied();
    let want_groups = given("security_group_ids", "sg");
    let expected = format!(
        "subnetId: {}, securityGroupIds: {}",
        want_subnet.unwrap_or("subnet-<id>"),
        joined(&want_groups, ",", "sg-<id>[,sg-<id>…]")
    );
    let found = format!(
        "subnetId: {}, securityGroupIds: {}",
        or_dash(subnet),
        joined(&groups, ",", "—")
    );
    let fail = |hint: &str| Outcome::fail(NETWORK, expected.clone(), found.clone()).hint(hint);
    let Some(subnet) = subnet else {
        return fail("no-subnet");
    };
    if subnet.contains([',', ' ']) {
        return fail("several-subnets").with("value", subnet);
    }
    let malformed = |field: &str, v: &str| {
        fail("malformed")
            .with("field", field)
            .with("value", format!("\"{v}\""))
    };
    if !fsx::is_ec2_id(subnet, "subnet") {
        return malformed("subnetId", subnet);
    }
    if groups.is_empty() {
        return fail("no-security-group");
    }
    if let Some(g) = groups.iter().find(|g| !fsx::is_ec2_id(g, "sg")) {
        return malformed("securityGroupIds", g);
    }
    if let Some(w) = want_subnet.filter(|w| *w != subnet) {
        return fail("other-subnet").with("subnet", subnet).with("want", w);
    }
    let missing: Vec<&str> = want_groups
        .iter()
        .copied()
        .filter(|w| !groups.contains(w))
        .collect();
    if !missing.is_empty() {
        return fail("other-security-group").with("missing", missing.join(","));
    }
    Outcome::pass(NETWORK).expected_found(expected, found)
}

/// Parameters the driver ignores, and a class that tries to link S3 itself.
fn advise(j: &mut Judgement, c: &StorageClass) {
    let keys: Vec<&str> = c.params.keys().map(String::as_str).collect();
    let ignored = fsx::ignored_params(&keys);
    if !ignored.is_empty() {
        j.advise(Advice::new("ignored-parameters").with("params", ignored.join(", ")));
    }
    if fsx::links_s3(&keys) {
        j.advise(Advice::new("dra"));
    }
}

// ---------------------------------------------------------------------------------------------
// The claim and the Job

fn pvc_rwx_size(claim: &Claim, class: Option<&StorageClass>, class_name: &str) -> Outcome {
    // Sizes follow the class as written (unset: SCRATCH_1), the lab's type without a class.
    let text = |k| class.and_then(|c: &StorageClass| c.text(k));
    let asked = Asked {
        deployment: class.map_or(TARGET.as_str(), |c| c.text("deploymentType").unwrap_or("")),
        storage: Storage::of(text("storageType"), text("perUnitStorageThroughput")),
    };
    let caps = asked.capacities();
    let modes = claim.access_modes.join(", ");
    let request = claim.request.as_ref().map(|q| q.to_string());
    let expected = format!(
        "accessModes: [{}], storageClassName: {class_name}, storage: {}",
        storage::READ_WRITE_MANY,
        caps.describe()
    );
    let found = format!(
        "accessModes: [{modes}], storageClassName: {}, storage: {}",
        or_dash(claim.storage_class.as_deref()),
        or_dash(request.as_deref())
    );
    let fail = |hint: &str| {
        Outcome::fail(PVC_SIZE, expected.clone(), found.clone())
            .hint(hint)
            .with("class", class_name)
            .with("pvc", PVC)
    };
    if let Some(error) = claim.rejection() {
        return fail("rejected").with("error", error);
    }
    if !claim.read_write_many() {
        return fail("access-mode").with("modes", &modes);
    }
    match claim.storage_class.as_deref() {
        None | Some("") => return fail("no-storage-class"),
        Some(s) if s != class_name => return fail("storage-class").with("storage_class", s),
        Some(_) => {}
    }
    // rejection() left a positive request.
    let bytes = claim.request.as_ref().map_or(0, |q| q.bytes());
    if bytes % GIB != 0 || !caps.accepts(bytes / GIB) {
        return fail("size")
            .with("request", request.unwrap_or_default())
            .with("request_gib", fsx::gib_text(bytes))
            .with("rounded", asked.round_up_gib(bytes))
            .with("valid", caps.describe())
            .with("deployment_type", asked.deployment_text());
    }
    Outcome::pass(PVC_SIZE).expected_found(expected, found)
}

/// `(parallelism, completions, pods at once)` of a batch/v1 Job: parallelism defaults to 1, and
/// no more pods run than completions remain (k8s.io/api `batch/v1` `JobSpec`).
fn at_once(w: &Workload) -> (i64, Option<i64>, i64) {
    let spec = w.batch_job().and_then(|b| b.spec.as_ref());
    let par = spec.and_then(|s| s.parallelism).map_or(1, i64::from);
    let comp = spec.and_then(|s| s.completions).map(i64::from);
    (par, comp, comp.map_or(par, |c| c.min(par)))
}

fn mount_claim(w: &Workload) -> Outcome {
    if let Some(r) = job::rejections(w) {
        return r.outcome(MOUNT);
    }
    let expected = format!(
        "spec.template.spec.volumes[].persistentVolumeClaim.claimName: {PVC}; spec.parallelism ≥ 2"
    );
    let fail = |found: String| Outcome::fail(MOUNT, expected.clone(), found).with("pvc", PVC);
    let mut mounted = Vec::new();
    for t in &w.templates {
        let (volumes, claims) = match storage::claim_use(t, PVC) {
            ClaimUse::Mounted {
                mount_field, path, ..
            } => {
                mounted.push(format!("{mount_field}.mountPath: {path}"));
                continue;
            }
            ClaimUse::NotMounted { volume_field } => {
                return fail(format!("{volume_field}: {PVC}; volumeMounts: —"))
                    .hint("not-mounted")
                    .with("volume", volume_field)
            }
            ClaimUse::Refused { field, error } => {
                let o = fail(error.clone()).hint("rejected").with("error", error);
                return o.with("field", field);
            }
            ClaimUse::Absent { volumes, claims } => (volumes, claims),
        };
        let shown = joined(&volumes, ", ", "—");
        let o = fail(format!("{}.volumes: {shown}", t.path)).with("path", &t.path);
        return match claims.as_slice() {
            [] => o,
            c => o.hint("other-claim").with("claims", c.join(", ")),
        };
    }
    let (par, comp, n) = at_once(w);
    if n < 2 {
        let comp = comp.map_or("—".to_string(), |c| c.to_string());
        return fail(format!("spec.parallelism: {par}, spec.completions: {comp}"))
            .hint("one-pod")
            .with("parallelism", par)
            .with("completions", comp);
    }
    let found = format!("{}; spec.parallelism: {par}", mounted.join(", "));
    Outcome::pass(MOUNT).expected_found(expected, found)
}

// ---------------------------------------------------------------------------------------------
// State: the claim bound, the pods up

/// Spec failures that keep the claim from an FSx file system: another class, or parameters the
/// driver or FSx refuse (a SCRATCH type, a ReadWriteOnce claim or a rounded size still bind).
/// `(check, its failing hints)`, no hints: any failure.
#[rustfmt::skip]
const BLOCKING: [(&str, &[&str]); 4] = [
    (PROVISIONER_CHECK, &[]),
    (DEPLOYMENT, &["no-throughput", "throughput", "s3-link"]),
    (NETWORK, &["no-subnet", "several-subnets", "malformed", "no-security-group"]),
    (PVC_SIZE, &["rejected", "no-storage-class", "storage-class"]),
];

fn blocking(j: &Judgement) -> Vec<&str> {
    let blocks = |o: &Outcome, hints: &[&str]| {
        o.status == Status::Fail
            && (hints.is_empty() || hints.contains(&o.hint.as_deref().unwrap_or("")))
    };
    let failed = |(c, hints): &&(&str, &[&str])| j.get(c).is_some_and(|o| blocks(o, hints));
    BLOCKING.iter().filter(failed).map(|(c, _)| *c).collect()
}

fn pvc_bound(ctx: &JudgeCtx, obj: &Obj, claim: &Claim, j: &Judgement, events: &[&Obj]) -> Outcome {
    let expected = format!("PersistentVolumeClaim {PVC} status.phase: Bound");
    let phase = or_dash(claim.phase.as_deref());
    let found = format!("status.phase: {phase}");
    let ns = &ctx.target.namespace;
    let fail = |hint: &str| {
        Outcome::fail(BOUND, expected.clone(), found.clone())
            .hint(hint)
            .with("pvc", PVC)
            .with("namespace", ns)
    };
    match phase {
        "Bound" => {
            let found = format!(
                "{found}, spec.volumeName: {}, status.capacity.storage: {}",
                or_dash(claim.volume_name.as_deref()),
                or_dash(claim.capacity.as_deref())
            );
            return Outcome::pass(BOUND).expected_found(expected, found);
        }
        "Lost" => return fail("lost"),
        _ => {}
    }
    let causes = blocking(j);
    if !causes.is_empty() {
        return fail("spec").with("checks", causes.join(", "));
    }
    let pending = |m: &str| {
        Outcome::pending(BOUND, Reason::Message(m.into()))
            .expected_found(expected.clone(), found.clone())
            .with("pvc", PVC)
            .with("namespace", ns)
    };
    match storage::latest_event(events, obj.uid().unwrap_or("")) {
        Some(("Warning", "ProvisioningFailed", m)) if fsx::is_retried(m) => {
            pending("provisioning-retry").with("message", m)
        }
        Some(("Warning", "ProvisioningFailed", m)) => {
            fail("provisioning-failed").with("message", m)
        }
        Some((_, "WaitForFirstConsumer", _)) => pending("waiting-consumer"),
        _ => pending("provisioning"),
    }
}

fn pods_running(
    ctx: &JudgeCtx,
    w: &Workload,
    bound: Option<Status>,
    events: &[&Obj],
) -> Result<Outcome, InputError> {
    let (_, _, n) = at_once(w);
    // Pods cannot start before their claim binds: pvc-bound says why.
    let expected = format!("pods Running|Succeeded: {n}");
    let why = Reason::Message("waiting-claim".into());
    let waiting = match bound {
        Some(Status::Fail) => Some(Outcome::fail(RUNNING, expected, "—").hint("claim")),
        Some(Status::Pending) => Some(Outcome::pending(RUNNING, why)),
        _ => None,
    };
    if let Some(o) = waiting {
        return Ok(o.with("pvc", PVC));
    }
    let pods = match ctx.list(&POD_READ) {
        Ok(p) => p,
        Err(why) => return Ok(Outcome::unavailable(RUNNING, &why)),
    };
    let states = pods::directly_owned_states(w.obj, &pods)?;
    let mut o = pods::running(RUNNING, &JobEnd::of(w)?, &states, n)
        .with("job", JOB)
        .with("namespace", &ctx.target.namespace);
    let mine: Vec<&Obj> = pods
        .iter()
        .copied()
        .filter(|p| states.iter().any(|s| s.name == p.name()))
        .collect();
    match storage::failed_mount(&mine, events) {
        Some((pod, m)) if o.status == Status::Pending => {
            o.reason = Some(Reason::Message("mount-failing".into()));
            o = o.with("pod", pod).with("message", m);
        }
        _ => {}
    }
    Ok(o)
}

//! Lab `hello-gpu` (the example of docs/adding-a-lab.md): a batch/v1 Job `hello-gpu` whose pod
//! asks for GPUs in `resources.limits` and runs to completion.
//!
//! A verifier declares its reads once (`READS`), finds the object its lab is about with
//! `ctx.named` (every check fails once with the lab's `missing:` text when it is absent), and
//! judges with the kit's shared rules: the workload's pod templates, the effective request, the
//! conditions. Texts live in lab.yaml; this file only decides and reports facts.

use crate::observe::kinds::JOBS;
use crate::observe::InputError;
use crate::verify::kit::k8s::conditions;
use crate::verify::kit::k8s::resources::pod_count;
use crate::verify::kit::k8s::workload::Workload;
use crate::verify::{JudgeCtx, Judgement, Named, Outcome, Params, Read, Reason, Verifier};

pub struct HelloGpu;

static JOBS_READ: Read = Read::lab(&JOBS);
static READS: &[&Read] = &[&JOBS_READ];

const JOB: &str = "hello-gpu";
const GPU: &str = "nvidia.com/gpu";
const GPU_IN_LIMITS: &str = "gpu-in-limits";
const JOB_COMPLETE: &str = "job-complete";
const CHECKS: &[&str] = &[GPU_IN_LIMITS, JOB_COMPLETE];

impl Verifier for HelloGpu {
    fn lab_id(&self) -> &'static str {
        "hello-gpu"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match ctx.named(&JOBS_READ, JOB, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => return Ok(j),
        };
        let Some(job) = Workload::from_obj(obj)? else {
            return Err(obj.field_error("kind", "expected a batch/v1 Job"));
        };
        let want = Params::number(ctx.params.get("gpus"), "gpus")?.unwrap_or(1);
        let mut j = Judgement::default();

        // Spec: every pod template asks for the GPUs (requests default to limits).
        let t = &job.templates[0];
        let gpus = pod_count(&t.spec, GPU).map_err(|e| obj.field_error(t.path.clone(), e))?;
        let spec = if gpus == i64::from(want) {
            Outcome::pass(GPU_IN_LIMITS)
        } else {
            Outcome::fail(
                GPU_IN_LIMITS,
                format!("{GPU}: {want}"),
                format!("{GPU}: {gpus}"),
            )
        };
        j.push(
            spec.with("gpus", want)
                .with("found_gpus", gpus)
                .with("path", &t.path),
        );

        // State: the Job's Complete condition (batch/v1 JobConditionType).
        let conds = conditions::from_object(&obj.value)
            .map_err(|e| obj.field_error("status.conditions", e))?;
        let state = if conditions::is_true(&conds, "Complete") {
            Outcome::pass(JOB_COMPLETE)
        } else if conditions::is_true(&conds, "Failed") {
            Outcome::fail(JOB_COMPLETE, "Complete=True", "Failed=True").with("state", "failed")
        } else {
            Outcome::pending(JOB_COMPLETE, Reason::Message("running".into()))
                .with("state", "running")
        };
        j.push(state.with("namespace", &ctx.target.namespace));
        Ok(j)
    }
}

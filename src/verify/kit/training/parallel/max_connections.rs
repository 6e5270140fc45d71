//! Advice on `CUDA_DEVICE_MAX_CONNECTIONS`, which Megatron-LM needs at 1 when layers are split.

use crate::verify::Advice;

use super::degrees::{Degrees, Value};
use super::launch::{JobLaunch, RoleLaunch};

/// Advice `max-connections` (`max-connections-unset` when nothing sets it) when a Megatron-LM role splits layers (TP or CP > 1) and starts
/// without `CUDA_DEVICE_MAX_CONNECTIONS=1`. Megatron-LM's `validate_args` stops on it only on GPUs
/// before Blackwell (megatron-core 0.19.0 wheel, `megatron/training/arguments.py` lines
/// 1412-1439: with `tensor_model_parallel_size > 1` or `context_parallel_size > 1` and
/// `get_device_arch_version() < 10`, it asserts the variable is `1`, so the communication
/// kernels queue in order with compute; with `--use-torch-fsdp2`, `--use-megatron-fsdp` or
/// `--overlap-moe-expert-parallel-comm` it only warns, and from compute capability 10 on the
/// requirement is gone). A
/// manifest does not say which GPU the pods get, so this is advice, not a fail; the kind profile's
/// stand-in trainer behaves as an H100 and refuses to start, which `pods-running` reports.
/// Evidence: `role`, `found` (the value written), `model` (TP × PP × CP as written).
pub fn max_connections_advice(job: &JobLaunch, d: &Degrees) -> Option<Advice> {
    let splits_layers = |v: &Value| v.degree().is_some_and(|n| n > 1);
    if !splits_layers(&d.tp) && !splits_layers(&d.cp) {
        return None;
    }
    // The three options under which validate_args warns instead of asserting.
    const ONLY_WARNS: [&str; 3] = [
        "--use-torch-fsdp2",
        "--use-megatron-fsdp",
        "--overlap-moe-expert-parallel-comm",
    ];
    let asserts = |r: &RoleLaunch| {
        !r.script_args
            .iter()
            .any(|a| ONLY_WARNS.contains(&a.as_str()))
    };
    let role = job
        .roles
        .iter()
        .find(|r| r.megatron && asserts(r) && r.max_connections.as_deref() != Some("1"))?;
    let advice = match &role.max_connections {
        Some(found) => Advice::new("max-connections").with("found", found),
        None => Advice::new("max-connections-unset"),
    };
    Some(
        advice
            .with("role", &role.role)
            .with("model", d.describe_model_parallel()),
    )
}

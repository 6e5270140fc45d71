//! `tp-within-node`: no tensor-parallel group spans two of the GPU nodes the pods may use.

use crate::verify::kit::nodes::capacity::GpuNodes;
use crate::verify::{Outcome, Reason};

use super::degrees::Degrees;

/// `tp-within-node`: TP ≤ GPUs per node and TP divides it, so no tensor-parallel group spans
/// two nodes. Hints: default (TP does not divide the node's GPUs), `spans-nodes` (TP larger than
/// a node). Message `tp-unknown` (skipped) while TP itself is not a literal (the check that
/// sets TP says why). Evidence: `tp`, `tp_written`, `gpus_per_node`.
pub fn check_tp_within_node(check: &str, d: &Degrees, nodes: &GpuNodes) -> Outcome {
    let Some(tp) = d.tp.degree() else {
        return Outcome::skipped(check, Reason::Message("tp-unknown".into()))
            .with("tp_written", d.tp.written());
    };
    let g = match &nodes.gpus_per_node {
        Ok(g) => *g,
        Err(u) => return u.outcome(check),
    };
    let expected = format!("TP ≤ {g}, {g} % TP == 0 (nvidia.com/gpu per node: {g})");
    let found = format!("TP {tp} ({})", d.tp.written());
    let o = if tp <= g && g % tp == 0 {
        Outcome::pass(check).expected_found(expected, found)
    } else if tp > g {
        Outcome::fail(check, expected, found).hint("spans-nodes")
    } else {
        Outcome::fail(check, expected, found)
    };
    o.with("tp", tp)
        .with("tp_written", d.tp.written())
        .with("gpus_per_node", g)
}

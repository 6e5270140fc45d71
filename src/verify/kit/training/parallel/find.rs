//! A training job by name, absent when written in a version the API server does not serve.

use crate::verify::{JudgeCtx, Named, Read};

/// The object named `name` of `read`, as [`JudgeCtx::named`] finds it; an object of the read's
/// group and kind in another `apiVersion` is absent too: the API server serves only the version
/// it knows (a PyTorchJob is `kubeflow.org/v1`), so it would refuse the manifest. Then every
/// check fails once with the lab's `missing` text, found naming the version written.
pub fn find_job<'a>(ctx: &JudgeCtx<'a>, read: &Read, name: &str, checks: &[&str]) -> Named<'a> {
    let found = ctx.named(read, name, checks);
    let kind = read.kind;
    let Named::Found(o) = found else {
        return found;
    };
    if o.api_version() == kind.api_version() {
        return Named::Found(o);
    }
    let expected = format!("{} {} {name}", kind.api_version(), kind.kind);
    let written = format!("{} {} {name}", o.api_version(), o.kind());
    ctx.missing(checks, kind, name, expected, written)
}

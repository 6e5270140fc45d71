//! Pod status as the checks read it: every container termination (current state and
//! `lastState`, which a restart hides), containers stuck waiting, and the scheduler's message.

use k8s_openapi::api::core::v1::Pod;

use crate::observe::{InputError, Obj};

/// One container's status, as the kubelet reports it.
#[derive(Debug, Clone)]
pub struct ContainerEnd {
    pub container: String,
    pub reason: String,
    pub exit_code: i32,
    pub message: Option<String>,
    /// From `lastState` (a restart followed it).
    pub earlier: bool,
}

impl ContainerEnd {
    /// `pod/container: OOMKilled (exit 137)`, `…: Error (exit 1): ValueError: …`.
    pub fn describe(&self, pod: &str) -> String {
        let base = format!(
            "{pod}/{}: {} (exit {})",
            self.container, self.reason, self.exit_code
        );
        match self
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            Some(m) => format!("{base}: {}", last_line(m)),
            None => base,
        }
    }
}

/// The last non-empty line of a termination message (the tool's exception line).
fn last_line(m: &str) -> &str {
    m.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(m)
}

/// What the checks need of one pod.
#[derive(Debug, Clone)]
pub struct PodState {
    pub name: String,
    pub phase: String,
    pub node: Option<String>,
    /// Every termination of its containers (current state and `lastState`).
    pub ends: Vec<ContainerEnd>,
    /// `(container, reason, message)` of containers waiting to (re)start.
    pub waiting: Vec<(String, String, String)>,
    /// The scheduler's `PodScheduled=False` message.
    pub unschedulable: Option<String>,
}

impl PodState {
    /// The first termination with a non-zero exit (a crash, an OOM kill, a refused command).
    pub fn failure(&self) -> Option<&ContainerEnd> {
        self.ends.iter().find(|e| e.exit_code != 0)
    }
}

/// Reads pods (core/v1 `PodStatus.containerStatuses[].state` / `.lastState`).
pub fn pod_states(pods: &[&Obj]) -> Result<Vec<PodState>, InputError> {
    let mut out = Vec::new();
    for o in pods {
        let pod: Pod = o.parse()?;
        let status = pod.status.unwrap_or_default();
        let mut ends = Vec::new();
        let mut waiting = Vec::new();
        let statuses = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten());
        for cs in statuses {
            for (st, earlier) in [(cs.state.as_ref(), false), (cs.last_state.as_ref(), true)] {
                let Some(st) = st else { continue };
                if let Some(t) = &st.terminated {
                    ends.push(ContainerEnd {
                        container: cs.name.clone(),
                        reason: t.reason.clone().unwrap_or_else(|| "Terminated".into()),
                        exit_code: t.exit_code,
                        message: t.message.clone(),
                        earlier,
                    });
                }
                if let (Some(w), false) = (&st.waiting, earlier) {
                    waiting.push((
                        cs.name.clone(),
                        w.reason.clone().unwrap_or_default(),
                        w.message.clone().unwrap_or_default(),
                    ));
                }
            }
        }
        let unschedulable = status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
            .map(|c| c.message.clone().unwrap_or_default());
        out.push(PodState {
            name: o.name().to_string(),
            phase: status.phase.unwrap_or_else(|| "Pending".into()),
            node: pod.spec.and_then(|s| s.node_name).filter(|n| !n.is_empty()),
            ends,
            waiting,
            unschedulable,
        });
    }
    Ok(out)
}

/// Waiting reasons that do not clear by themselves: the image, the command or its config is
/// wrong (kubelet `images` and `kuberuntime` reasons).
pub const STUCK: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

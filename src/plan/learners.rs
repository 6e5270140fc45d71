//! Who is in the room and where each learner's labs live: learner names, the namespace template
//! (`{learner}-{lab}`), and the prefix of cluster-scoped objects (`alice-gpu-training`).

use crate::verify::Target;
use crate::Error;

/// The namespace template when none is given: one namespace per learner per lab.
pub const DEFAULT_TEMPLATE: &str = "{learner}-{lab}";

/// Kubernetes namespace names are RFC 1123 labels of at most 63 characters
/// (k8s.io/apimachinery/pkg/util/validation/validation.go, `IsDNS1123Label`,
/// `DNS1123LabelMaxLength`; the namespace strategy validates names with it).
const LABEL_MAX: usize = 63;

/// Whether `s` is an RFC 1123 label: lowercase letters, digits and `-`, starting and ending
/// with a letter or digit, at most 63 characters.
pub fn is_dns_label(s: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= LABEL_MAX
        && s.chars().all(|c| ok_char(c) || c == '-')
        && s.starts_with(ok_char)
        && s.ends_with(ok_char)
}

/// A namespace given on the command line (`-n`) or made from a learner name: it goes into
/// request paths, so anything but an RFC 1123 label (`ns/../../api`, `x?y=1`, an empty name,
/// 64 characters) is refused before any request.
pub fn check_namespace(ns: &str, from: &str) -> Result<(), Error> {
    check_namespace_then(ns, from, ("", ""))
}

/// [`check_namespace`], with what to do next (`ja`, `en`) after the reason.
fn check_namespace_then(ns: &str, from: &str, next: (&str, &str)) -> Result<(), Error> {
    if is_dns_label(ns) {
        return Ok(());
    }
    let shown = crate::catalog::echo(ns, 80);
    let (ja, en) = if ns.is_empty() {
        ("空です".to_string(), "it is empty".to_string())
    } else if ns.len() > LABEL_MAX {
        (
            format!("{} 文字あります（{LABEL_MAX} 文字まで）", ns.len()),
            format!(
                "it has {} characters, at most {LABEL_MAX} characters are allowed",
                ns.len()
            ),
        )
    } else {
        (
            "namespace 名に使えるのは英小文字、数字と `-` で、先頭と末尾は英小文字か数字です".to_string(),
            "a namespace name is lowercase letters, digits and `-`, starting and ending with a letter or digit".to_string(),
        )
    };
    let (next_ja, next_en) = next;
    Err(Error::usage(
        format!("{from} `{shown}`: namespace 名として使えません: {ja}{next_ja}"),
        format!("{from} `{shown}`: not a valid namespace name: {en}{next_en}"),
    ))
}

/// The namespace of a learner's lab, from a template with `{learner}` (exactly once) and
/// optionally `{lab}` (the lab id). Without `{lab}`, a learner's labs share one namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    text: String,
}

impl Template {
    pub fn parse(text: &str) -> Result<Template, Error> {
        let bad = |why_ja: &str, why: &str| {
            Error::usage(
                format!("--namespace-template {text}: {why_ja}（既定値: {DEFAULT_TEMPLATE}）"),
                format!("--namespace-template {text}: {why} (default: {DEFAULT_TEMPLATE})"),
            )
        };
        let mut rest = text;
        let mut learners = 0;
        while let Some(start) = rest.find('{') {
            let after = &rest[start + 1..];
            let Some(end) = after.find('}') else {
                return Err(bad("`{` が閉じていません", "an unclosed `{`"));
            };
            match &after[..end] {
                "learner" => learners += 1,
                "lab" => {}
                other => {
                    return Err(bad(
                        &format!("プレースホルダー {{{other}}} はありません。{{learner}} と {{lab}} を使ってください"),
                        &format!("unknown placeholder {{{other}}}; use {{learner}} and {{lab}}"),
                    ))
                }
            }
            rest = &after[end + 1..];
        }
        if learners != 1 {
            return Err(bad(
                "{learner} をちょうど 1 回含めてください",
                "it must contain {learner} exactly once",
            ));
        }
        // The literal parts must keep a namespace valid for a valid learner and lab id.
        let sample = Template {
            text: text.to_string(),
        }
        .namespace("a", "b");
        if !is_dns_label(&sample) {
            return Err(bad(
                "namespace 名として使える名前（英小文字、数字と `-`）になるようにしてください",
                "it must make a valid namespace name (lowercase letters, digits and `-`)",
            ));
        }
        Ok(Template {
            text: text.to_string(),
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `{learner}-{lab}` → `alice-volcano-gang`.
    pub fn namespace(&self, learner: &str, lab: &str) -> String {
        self.text
            .replace("{learner}", learner)
            .replace("{lab}", lab)
    }

    /// The learner whose namespace for `lab` is `namespace`, when the template makes it.
    pub fn learner_of(&self, namespace: &str, lab: &str) -> Option<String> {
        let with_lab = self.text.replace("{lab}", lab);
        let (before, after) = with_lab.split_once("{learner}")?;
        let learner = namespace.strip_prefix(before)?.strip_suffix(after)?;
        is_dns_label(learner).then(|| learner.to_string())
    }
}

impl Default for Template {
    fn default() -> Self {
        Template {
            text: DEFAULT_TEMPLATE.to_string(),
        }
    }
}

/// A learner name is part of namespace and object names, so it must be an RFC 1123 label.
pub fn check_learner(name: &str) -> Result<(), Error> {
    if is_dns_label(name) {
        Ok(())
    } else {
        Err(Error::usage(
            format!("受講者 `{name}`: 受講者名は namespace 名やオブジェクト名の一部になるため、英小文字、数字と `-` で書いてください（{LABEL_MAX} 文字まで、先頭と末尾は英小文字か数字）"),
            format!("learner `{name}`: a learner name becomes part of namespace and object names, so it must be lowercase letters, digits and `-` (at most {LABEL_MAX} characters, starting and ending with a letter or digit)"),
        ))
    }
}

/// `--learners a,b,c`: names in the order given, each valid, none twice.
pub fn parse_learners(names: &[String]) -> Result<Vec<String>, Error> {
    let mut out: Vec<String> = Vec::new();
    for n in names.iter().flat_map(|s| s.split(',')).map(str::trim) {
        if n.is_empty() {
            continue;
        }
        check_learner(n)?;
        if out.iter().any(|o| o == n) {
            return Err(Error::usage(
                format!("受講者 `{n}` が 2 回指定されています"),
                format!("learner `{n}` is named twice"),
            ));
        }
        out.push(n.to_string());
    }
    if out.is_empty() {
        return Err(Error::usage(
            "--learners に受講者が 1 人も指定されていません",
            "--learners names no learner",
        ));
    }
    Ok(out)
}

/// Where one learner's lab lives on a shared cluster: the templated namespace, and the learner
/// prefix for cluster-scoped objects the lab asks for (`alice-gpu-training`).
pub fn shared_target(template: &Template, learner: &str, lab_id: &str) -> Target {
    Target {
        context: None,
        namespace: template.namespace(learner, lab_id),
        learner: Some(learner.to_string()),
        name_prefix: format!("{learner}-"),
    }
}

/// Where a command puts or looks for `lab_id`'s objects, from `-n` and `--learner`, resolved
/// once for every command (`check`, `start`, `solve`, `reset`): `-n` names the namespace;
/// `--learner NAME` is where `trainlab grade --learners NAME` looks on a shared cluster (the
/// default namespace template) and prefixes the task's cluster-scoped objects with `NAME-`;
/// else the lab's own namespace, no prefix. A name that cannot be a namespace is refused,
/// saying which flag made it.
pub fn place(
    lab_id: &str,
    namespace: Option<&str>,
    learner: Option<&str>,
) -> Result<Target, Error> {
    let mut target = match learner {
        Some(l) => {
            check_learner(l)?;
            shared_target(&Template::default(), l, lab_id)
        }
        None => Target::for_lab(lab_id),
    };
    match (namespace, learner) {
        (Some(ns), _) => {
            check_namespace(ns, "-n")?;
            target.namespace = ns.to_string();
        }
        (None, Some(l)) => check_namespace_then(
            &target.namespace,
            &format!("--learner {l}: the namespace"),
            (
                "。短い受講者名を使うか、-n で namespace を指定してください",
                "; use a shorter learner name, or give the namespace with -n",
            ),
        )?,
        (None, None) => {}
    }
    Ok(target)
}

/// Where a learner's lab lives on a cluster of their own: the lab's usual namespace, no prefix.
pub fn own_cluster_target(learner: &str, lab_id: &str) -> Target {
    let mut t = Target::for_lab(lab_id);
    t.learner = Some(learner.to_string());
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_template_makes_and_reads_back_namespaces() {
        let t = Template::default();
        assert_eq!(t.namespace("alice", "volcano-gang"), "alice-volcano-gang");
        assert_eq!(
            t.learner_of("alice-volcano-gang", "volcano-gang")
                .as_deref(),
            Some("alice")
        );
        // A learner name may itself contain `-`.
        assert_eq!(
            t.learner_of("ann-marie-efa-nccl", "efa-nccl").as_deref(),
            Some("ann-marie")
        );
        assert_eq!(t.learner_of("alice-efa-nccl", "volcano-gang"), None);
        assert_eq!(t.learner_of("-volcano-gang", "volcano-gang"), None);
    }

    #[test]
    fn other_templates_work_and_bad_ones_are_refused_with_the_reason() {
        let t = Template::parse("ws1-{lab}-{learner}").unwrap();
        assert_eq!(t.namespace("bo", "efa-nccl"), "ws1-efa-nccl-bo");
        assert_eq!(
            t.learner_of("ws1-efa-nccl-bo", "efa-nccl").as_deref(),
            Some("bo")
        );
        let shared = Template::parse("room-{learner}").unwrap();
        assert_eq!(shared.namespace("bo", "efa-nccl"), "room-bo");
        for (bad, why) in [
            ("{lab}", "exactly once"),
            ("{learner}-{learner}", "exactly once"),
            ("{learner}-{user}", "unknown placeholder {user}"),
            ("{learner}-{lab", "unclosed"),
            ("Team_{learner}", "valid namespace"),
        ] {
            let e = Template::parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn learner_names_must_be_labels_and_unique() {
        assert_eq!(
            parse_learners(&["a,b".into(), "c".into()]).unwrap(),
            ["a", "b", "c"]
        );
        assert!(parse_learners(&["Alice".into()])
            .unwrap_err()
            .to_string()
            .contains("lowercase"));
        assert!(parse_learners(&["a,a".into()])
            .unwrap_err()
            .to_string()
            .contains("twice"));
        assert!(parse_learners(&[",".into()]).is_err());
        assert!(check_learner(&"x".repeat(64)).is_err());
    }

    #[test]
    fn shared_targets_prefix_cluster_scoped_names_with_the_learner() {
        let t = shared_target(&Template::default(), "alice", "karpenter-single-az");
        assert_eq!(t.namespace, "alice-karpenter-single-az");
        assert_eq!(t.cluster_name("gpu-training"), "alice-gpu-training");
        let own = own_cluster_target("ctx-1", "karpenter-single-az");
        assert_eq!(own.namespace, "trainlab-karpenter-single-az");
        assert_eq!(own.cluster_name("gpu-training"), "gpu-training");
    }
}

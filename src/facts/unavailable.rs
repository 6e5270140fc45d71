//! Why a read is unavailable, in words: the report's reason and the Japanese side of errors. The
//! install command of a missing capability comes from the table beside it ([`super::capabilities`]).

use crate::observe::Unavailable;
use crate::text::Lang;

/// Why a read is unavailable, said in `lang` as the report says it (errors use it for their
/// Japanese side; their English side stays the `Display`).
pub fn unavailable_text(u: &Unavailable, lang: Lang) -> String {
    let ja = lang == Lang::Ja;
    match u {
        Unavailable::NeedsLiveCluster => {
            if ja {
                "ライブクラスターが必要です（静的モード）".into()
            } else {
                "needs a live cluster (static mode)".into()
            }
        }
        Unavailable::NotCaptured { resource } => {
            if ja {
                format!("スナップショットに {resource} が保存されていません（ラボが読むものをまとめて `trainlab snapshot LAB DIR` で、または `{}` で保存してください）", save_command(resource))
            } else {
                format!("the snapshot holds no {resource}: it was not saved (save what the labs read with `trainlab snapshot LAB DIR`, or this kind with `{}`)", save_command(resource))
            }
        }
        Unavailable::NotServed {
            resource,
            crd,
            capability,
        } => {
            let install = capability
                .as_deref()
                .map(|c| crate::facts::capabilities::install_hint_in(c, None, ja))
                .unwrap_or_default();
            match (ja, capability) {
                (true, Some(c)) => {
                    format!("{c} が必要です（CRD {crd} がありません）— インストール: {install}")
                }
                (false, Some(c)) => {
                    format!("requires {c} (CRD {crd} not found) — install with {install}")
                }
                (true, None) => format!("クラスターが {resource} を提供していません"),
                (false, None) => format!("the cluster does not serve {resource}"),
            }
        }
        Unavailable::Forbidden {
            verb,
            resource,
            namespace,
            message,
        } if ja => {
            let scope = match namespace {
                Some(ns) => format!("namespace {ns} の"),
                None => "クラスター全体の".to_string(),
            };
            let (kinds, commands) = u.rbac_fix().unwrap_or_default();
            format!("権限がありません: {scope} {resource} を {verb} できません（{message}）。{kinds} で許可できます。例: {commands}")
        }
        Unavailable::Forbidden { .. } | Unavailable::Failed { .. } => u.to_string(),
    }
}

/// The kubectl command that saves one resource into a snapshot folder: every namespace for a
/// namespaced kind, no namespace flag for a cluster-scoped one (nodes, StorageClasses).
fn save_command(resource: &str) -> String {
    let namespaced = crate::observe::kinds::ALL
        .iter()
        .find(|k| k.resource_name() == resource)
        .is_none_or(|k| k.namespaced);
    let all = if namespaced { " -A" } else { "" };
    format!("kubectl get {resource}{all} -o yaml > DIR/{resource}.yaml")
}

#[cfg(test)]
mod tests {
    #[test]
    fn cluster_scoped_kinds_are_saved_without_a_namespace_flag() {
        assert_eq!(
            super::save_command("nodes"),
            "kubectl get nodes -o yaml > DIR/nodes.yaml"
        );
        assert_eq!(
            super::save_command("jobs.batch.volcano.sh"),
            "kubectl get jobs.batch.volcano.sh -A -o yaml > DIR/jobs.batch.volcano.sh.yaml"
        );
    }
}

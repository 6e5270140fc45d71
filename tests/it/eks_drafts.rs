//! The kind trainer stand-in stays on kind (issue 31 §6): on EKS the starter does not apply its
//! ConfigMap and `start` writes the draft without its env, mount and volume, so the image's own
//! `torchrun` runs; a draft that runs the stand-in itself as its command keeps both, and the
//! two always go together.

use std::process::Command;

use trainlab::catalog::Catalog;
use trainlab::facts::Profile;
use trainlab::ops::eks_draft::without_standin;
use trainlab::ops::manifests::objects;
use trainlab::text::Lang;

use crate::support::test_site::test_site;

/// Whether the EKS starter of `lab` applies the stand-in's ConfigMap.
fn eks_starter_has_standin(b: &trainlab::catalog::LabBundle) -> bool {
    objects(b, "starter", Profile::Eks, &test_site("eks"))
        .unwrap()
        .iter()
        .any(|o| o.kind() == "ConfigMap" && o.name() == "trainer-standin")
}

#[test]
fn the_eks_starter_carries_the_stand_in_exactly_when_the_eks_draft_still_needs_it() {
    let catalog = Catalog::embedded().unwrap();
    let mut without = Vec::new();
    for b in &catalog.labs {
        let Some(rel) = b.lab.task.as_ref().and_then(|t| t.draft.clone()) else {
            continue;
        };
        for lang in [Lang::En, Lang::Ja] {
            let (path, text) = b.draft_in(&rel, lang).unwrap();
            if !text.contains("trainer-standin") {
                continue;
            }
            let eks = without_standin(text, &path).unwrap();
            let needs_it = eks.is_none();
            assert_eq!(
                eks_starter_has_standin(b),
                needs_it,
                "{}: {path}: the EKS starter applies the stand-in: {}, the EKS draft still needs it: {needs_it}",
                b.lab.id,
                eks_starter_has_standin(b)
            );
            if let Some(eks) = eks {
                assert!(!eks.contains("/opt/trainlab/"), "{path}:\n{eks}");
                without.push(b.lab.id.clone());
            }
        }
    }
    without.dedup();
    assert_eq!(
        without,
        [
            "tensor-parallelism",
            "parallelism-3d",
            "optimum-neuron",
            "bf16",
            "zero3-offload"
        ],
        "the labs whose EKS draft runs the image's own torchrun"
    );
}

#[test]
fn start_on_eks_writes_the_draft_without_the_stand_in_and_on_kind_with_it() {
    let dir = tempfile::tempdir().unwrap();
    for (profile, has_it) in [("eks", false), ("kind", true)] {
        for lang in ["en", "ja"] {
            let path = dir.path().join(format!("tp-llm-{profile}-{lang}.yaml"));
            let out = Command::new(env!("CARGO_BIN_EXE_trainlab"))
                .env("NO_COLOR", "1")
                .env("TRAINLAB_SITE_DIR", dir.path().join("no-site"))
                .args([
                    "--lang",
                    lang,
                    "start",
                    "1",
                    "--draft-only",
                    "--profile",
                    profile,
                ])
                .arg("--draft")
                .arg(&path)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{profile} {lang}: {stderr}");
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                text.contains("trainer-standin"),
                has_it,
                "{profile} {lang}:\n{text}"
            );
            assert_eq!(
                text.contains("/opt/trainlab/bin"),
                has_it,
                "{profile}:\n{text}"
            );
            // Still the draft: it reads, and its spec checks fail as a draft's do (exit 1).
            let check = Command::new(env!("CARGO_BIN_EXE_trainlab"))
                .env("NO_COLOR", "1")
                .args(["check", "1", "--profile", profile, "--files"])
                .arg(&path)
                .output()
                .unwrap();
            assert_eq!(
                check.status.code(),
                Some(1),
                "{profile} {lang}: {}",
                String::from_utf8_lossy(&check.stdout)
            );
        }
    }
}

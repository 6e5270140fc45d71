//! Lab 3 `slurm-accounting`: a Slinky Accounting (slurmdbd) on the starter's MariaDB, and the
//! Controller (slurmctld) that reports to it.

use crate::support;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use support::emulator::Emulator;
use support::state::*;
use trainlab::report::LabReport;
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Status};

const LAB: &str = "slurm-accounting";
const ACCT: &str = "slurm-accounting";
const CTL: &str = "slurm";
const NS: &str = "trainlab-slurm-accounting";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn solved() -> State {
    State::load("slurm-accounting/solution-state").and("kind-nodes")
}

/// A folder of the lab (`solution`, `draft`, `starter`) read as the learner's files.
fn files(folders: &[&str]) -> State {
    let mut s = State::load("slurm-accounting/solution-state").into_files();
    s.objects.clear();
    for f in folders {
        s = s.and(&format!("../../labs/03-slurm-accounting/{f}"));
    }
    s
}

fn storage(f: impl FnOnce(&mut Value)) -> impl FnOnce(&mut Value) {
    move |v: &mut Value| f(&mut v["spec"]["storageConfig"])
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

// ---------------------------------------------------------------------------------------------
// The solution and other right arrangements.

#[test]
fn the_solved_kind_cluster_passes_every_check() {
    let r = solved().grade(LAB);
    assert_all_pass(&r);
    assert!(r.advice.is_empty(), "{:?}", r.advice);
    let o = outcome(&r, "slurmdbd-ready");
    assert_eq!(
        o.found.as_deref(),
        Some("StatefulSet/slurm-accounting-accounting: readyReplicas 1/1")
    );
    let o = outcome(&r, "storage-config");
    assert_eq!(
        o.found.as_deref(),
        Some("spec.storageConfig: {host: mariadb, port: 3306, database: slurm_acct_db, username: slurm}")
    );
}

#[test]
fn a_fully_qualified_host_and_the_crd_defaults_pass_with_advice() {
    let host = format!("mariadb.{NS}.svc.cluster.local");
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| {
                s["host"] = json!(host);
                let m = s.as_object_mut().unwrap();
                m.remove("port");
                m.remove("database");
            }),
        )
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["storage-defaulted"]);
}

#[test]
fn the_learners_own_database_service_passes() {
    let r = solved()
        .add(&format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: acct-db\n  namespace: {NS}\nspec:\n  ports:\n  - port: 3307\n"
        ))
        .edit(
            "Accounting",
            ACCT,
            storage(|s| {
                s["host"] = json!(format!("acct-db.{NS}"));
                s["port"] = json!(3307);
                s["database"] = json!("accounting");
                s["username"] = json!("slurmdbd");
            }),
        )
        .grade(LAB);
    assert_all_pass(&r);
}

#[test]
fn a_controller_without_persistence_passes_with_the_state_advice() {
    let r = solved()
        .edit("Controller", CTL, |v| {
            v["spec"]["persistence"] = json!({"enabled": false})
        })
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["no-persistence"]);
    let rep = LabReport::new(&r, Lang::En);
    assert!(
        rep.advice[0].text.contains("cluster state"),
        "{}",
        rep.advice[0].text
    );
    let rep = LabReport::new(&r, Lang::Ja);
    assert!(rep.advice[0].text.contains("クラスター状態"));
}

/// `state` graded as the EKS profile grades it.
fn grade_eks(state: &State) -> LabResult {
    let catalog = trainlab::catalog::Catalog::embedded().unwrap();
    let bundle = catalog.get(LAB).unwrap();
    trainlab::labs::grade_lab(
        bundle,
        &state.observed(),
        &trainlab::verify::Target::for_lab(LAB),
        &std::collections::BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .unwrap()
}

#[test]
fn the_eks_solution_passes_the_spec_checks_and_its_volume_has_an_eks_storage_class() {
    // Issue 20 §1: EKS clusters created at 1.30+ have no default StorageClass.
    let eks = files(&["solution-eks"]);
    let r = grade_eks(&eks);
    for c in [
        "accounting-kind",
        "storage-config",
        "password-from-secret",
        "controller-references-accounting",
    ] {
        assert_eq!(status(&r, c), Status::Pass, "{c}: {:?}", outcome(&r, c));
    }
    assert!(advice_ids(&r).is_empty(), "{:?}", r.advice);
    let class = eks
        .objects
        .iter()
        .find(|o| o.kind() == "Controller")
        .and_then(|c| c.value["spec"]["persistence"]["storageClassName"].as_str())
        .expect("the EKS Controller names its StorageClass")
        .to_string();
    let starter = files(&["starter-eks"]);
    let sc = starter
        .objects
        .iter()
        .find(|o| o.kind() == "StorageClass" && o.name() == class)
        .expect("the EKS starter ships that StorageClass");
    assert_eq!(sc.value["provisioner"], "ebs.csi.aws.com");
    assert_eq!(sc.value["metadata"]["labels"]["trainlab.dev/lab"], LAB);
}

// ---------------------------------------------------------------------------------------------
// One broken state per check.

#[test]
fn an_accounting_without_its_slurm_key_is_what_the_crd_refuses() {
    let r = solved()
        .edit("Accounting", ACCT, |v| {
            v["spec"].as_object_mut().unwrap().remove("slurmKeyRef");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "accounting-kind", Some("rejected"));
    assert_eq!(o.found.as_deref(), Some("spec.slurmKeyRef: —"));
    assert!(hint(&r, "accounting-kind", Lang::En)
        .contains("`jwtKeyRef: {name: slurm-auth-jwt, key: jwt.key}`"));
}

#[test]
fn a_missing_jwt_key_is_refused_under_jwt_key_ref_the_field_to_use() {
    // Issue 20: jwtKeyRef is the field (jwtHs256KeyRef is deprecated since slurm-operator 1.1.0).
    let r = solved()
        .edit("Controller", CTL, |v| {
            v["spec"].as_object_mut().unwrap().remove("jwtKeyRef");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "controller-references-accounting", Some("rejected"));
    assert_eq!(o.found.as_deref(), Some("spec.jwtKeyRef: —"));
    assert_eq!(o.evidence["field"], "spec.jwtKeyRef");
    for lang in [Lang::En, Lang::Ja] {
        let h = hint(&r, "controller-references-accounting", lang);
        assert!(
            h.contains("`jwtKeyRef: {name: slurm-auth-jwt, key: jwt.key}`"),
            "{h}"
        );
        assert!(!h.contains("jwt_hs256.key"), "{h}");
    }
}

#[test]
fn the_deprecated_jwt_hs256_key_ref_passes_with_advice_naming_both_objects() {
    // The CRD accepts either name (`has(self.jwtKeyRef) || has(self.jwtHs256KeyRef)`).
    let rename = |v: &mut Value| {
        let spec = v["spec"].as_object_mut().unwrap();
        let r = spec.remove("jwtKeyRef").unwrap();
        spec.insert("jwtHs256KeyRef".into(), r);
    };
    let r = solved()
        .edit("Accounting", ACCT, rename)
        .edit("Controller", CTL, rename)
        .grade(LAB);
    assert_all_pass(&r);
    assert_eq!(advice_ids(&r), ["jwt-hs256-deprecated"]);
    assert_eq!(
        r.advice[0].evidence["objects"],
        "Accounting slurm-accounting, Controller slurm"
    );
    let rep = LabReport::new(&r, Lang::Ja);
    assert!(rep.advice[0].text.contains("`jwtKeyRef`"));
}

#[test]
fn a_host_that_names_no_service_fails_storage_config() {
    let r = solved()
        .edit("Accounting", ACCT, storage(|s| s["host"] = json!("mysql")))
        .grade(LAB);
    let o = assert_only_fails(&r, "storage-config", None);
    assert_eq!(
        o.evidence["services"],
        "mariadb, slurm-accounting-accounting, slurm-controller"
    );
    assert!(hint(&r, "storage-config", Lang::En).contains("`host: mariadb`"));
}

#[test]
fn a_host_in_another_namespace_fails_storage_config() {
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| s["host"] = json!("mariadb.default.svc")),
        )
        .grade(LAB);
    assert_only_fails(&r, "storage-config", Some("other-namespace"));
}

#[test]
fn a_port_the_service_does_not_expose_fails_storage_config() {
    let r = solved()
        .edit("Accounting", ACCT, storage(|s| s["port"] = json!(3307)))
        .grade(LAB);
    let o = assert_only_fails(&r, "storage-config", Some("port"));
    assert_eq!(o.evidence["service_ports"], "3306");
}

#[test]
fn another_database_or_user_of_the_starters_mariadb_fails_storage_config() {
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| s["database"] = json!("slurm")),
        )
        .grade(LAB);
    assert_only_fails(&r, "storage-config", Some("database"));
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| {
                s.as_object_mut().unwrap().remove("username");
            }),
        )
        .grade(LAB);
    let o = assert_only_fails(&r, "storage-config", Some("username"));
    assert_eq!(o.evidence["username"], "—");
}

#[test]
fn a_secret_that_does_not_exist_fails_password_from_secret() {
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| s["passwordKeyRef"]["name"] = json!("db-password")),
        )
        .grade(LAB);
    assert_only_fails(&r, "password-from-secret", Some("no-secret"));
    assert!(hint(&r, "password-from-secret", Lang::En).contains("never their contents"));
}

#[test]
fn a_key_the_starters_secret_does_not_have_fails_password_from_secret() {
    let r = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| s["passwordKeyRef"]["key"] = json!("mariadb-password")),
        )
        .grade(LAB);
    assert_only_fails(&r, "password-from-secret", Some("key"));
}

#[test]
fn a_password_written_into_extra_conf_fails_password_from_secret() {
    let r = solved()
        .edit("Accounting", ACCT, |v| {
            v["spec"]["extraConf"] = json!("CommitDelay=1\nStoragePass=hunter2")
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "password-from-secret", Some("inline"));
    // The password itself is never repeated in the report.
    assert!(!format!("{o:?}").contains("hunter2"));
}

#[test]
fn a_controller_without_accounting_ref_fails_controller_references_accounting() {
    let r = solved()
        .edit("Controller", CTL, |v| {
            v["spec"].as_object_mut().unwrap().remove("accountingRef");
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "controller-references-accounting", None);
    assert_eq!(
        o.found.as_deref(),
        Some("Controller slurm: spec.accountingRef.name: —")
    );
    let r = solved()
        .edit("Controller", CTL, |v| {
            v["spec"]["accountingRef"]["name"] = json!("slurm")
        })
        .grade(LAB);
    assert_only_fails(&r, "controller-references-accounting", Some("other"));
}

#[test]
fn no_controller_fails_the_reference_and_slurmctld() {
    let r = solved().remove(|o| o.kind() == "Controller").grade(LAB);
    assert_eq!(
        outcome(&r, "controller-references-accounting")
            .hint
            .as_deref(),
        Some("no-controller")
    );
    assert_eq!(
        outcome(&r, "slurmctld-ready").hint.as_deref(),
        Some("no-controller")
    );
    assert_eq!(status(&r, "slurmdbd-ready"), Status::Pass);
}

fn slurmdbd_pod(f: impl FnOnce(&mut Value)) -> impl FnOnce(State) -> State {
    move |s: State| {
        s.edit("StatefulSet", "slurm-accounting-accounting", |v| {
            v["status"]["readyReplicas"] = json!(0)
        })
        .edit("Pod", "slurm-accounting-accounting-0", |v| {
            v["status"]["conditions"][0]["status"] = json!("False");
            v["status"]["containerStatuses"][0]["ready"] = json!(false);
            f(&mut v["status"]["containerStatuses"][0]);
        })
    }
}

#[test]
fn a_slurmdbd_image_that_cannot_be_pulled_fails_slurmdbd_ready() {
    let r = slurmdbd_pod(|c| {
        c["state"] = json!({"waiting": {"reason": "ImagePullBackOff",
            "message": "Back-off pulling image \"ghcr.io/slinkyproject/slurmdbd:26.05\""}})
    })(solved())
    .grade(LAB);
    let o = assert_only_fails(&r, "slurmdbd-ready", Some("stuck"));
    assert_eq!(
        o.found.as_deref(),
        Some("slurm-accounting-accounting-0/slurmdbd: ImagePullBackOff")
    );
}

#[test]
fn a_slurmdbd_that_cannot_log_in_crashes_and_fails_slurmdbd_ready() {
    let r = slurmdbd_pod(|c| {
        c["restartCount"] = json!(4);
        c["state"] = json!({"waiting": {"reason": "CrashLoopBackOff"}});
        c["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error"}});
    })(solved())
    .grade(LAB);
    assert_only_fails(&r, "slurmdbd-ready", Some("crash"));
    assert!(
        hint(&r, "slurmdbd-ready", Lang::En).contains("storage-config and password-from-secret")
    );
}

#[test]
fn starting_pods_are_pending_not_failed() {
    let r =
        slurmdbd_pod(|c| c["state"] = json!({"running": {"startedAt": "2026-12-02T10:02:30Z"}}))(
            solved(),
        )
        .grade(LAB);
    let o = outcome(&r, "slurmdbd-ready");
    assert_eq!(o.status, Status::Pending);
    assert_eq!(message(o), "starting");
    assert!(reason(&r, "slurmdbd-ready").contains("Ready 0/1"));
}

#[test]
fn a_controller_without_its_log_sidecar_image_never_gets_a_statefulset() {
    let r = solved()
        .edit("Controller", CTL, |v| {
            v["spec"].as_object_mut().unwrap().remove("logfile");
        })
        .remove(|o| o.name() == "slurm-controller" || o.name() == "slurm-controller-0")
        .grade(LAB);
    let o = assert_only_fails(&r, "slurmctld-ready", Some("no-image"));
    assert_eq!(o.evidence["fields"], "spec.logfile.image");
    for lang in [Lang::En, Lang::Ja] {
        assert!(hint(&r, "slurmctld-ready", lang).contains("docker.io/library/alpine:3.22"));
    }
}

#[test]
fn a_statefulset_the_operator_has_not_made_yet_is_pending() {
    let r = solved()
        .remove(|o| o.name().starts_with("slurm-accounting-accounting"))
        .grade(LAB);
    let o = outcome(&r, "slurmdbd-ready");
    assert_eq!((o.status, message(o)), (Status::Pending, "not-created"));
}

#[test]
fn a_statefulset_that_only_looks_like_the_accountings_is_not_it() {
    let r = solved()
        .edit("StatefulSet", "slurm-accounting-accounting", |v| {
            v["metadata"]["ownerReferences"][0]["uid"] =
                json!("00000000-0000-0000-0000-000000000000")
        })
        .grade(LAB);
    assert_eq!(message(outcome(&r, "slurmdbd-ready")), "not-created");
}

// ---------------------------------------------------------------------------------------------
// Static mode (--files).

#[test]
fn the_solution_files_pass_the_spec_checks_alone_or_with_the_starter() {
    for folders in [&["solution"][..], &["starter", "solution"]] {
        let r = files(folders).grade(LAB);
        for o in &r.outcomes {
            let want = if o.check.ends_with("-ready") {
                Status::Skipped
            } else {
                Status::Pass
            };
            assert_eq!(o.status, want, "{folders:?} {o:?}");
        }
    }
}

#[test]
fn the_draft_fails_three_spec_checks_with_their_hints() {
    let r = files(&["starter", "draft"]).grade(LAB);
    assert_eq!(status(&r, "accounting-kind"), Status::Pass);
    assert_eq!(
        outcome(&r, "storage-config").hint.as_deref(),
        Some("no-host")
    );
    assert_eq!(
        outcome(&r, "password-from-secret").hint.as_deref(),
        Some("no-ref")
    );
    assert_eq!(
        outcome(&r, "controller-references-accounting").status,
        Status::Fail
    );
}

#[test]
fn an_accounting_in_another_version_is_refused_by_name() {
    let r = files(&["solution"])
        .edit("Accounting", ACCT, |v| {
            v["apiVersion"] = json!("slinky.slurm.net/v1alpha1")
        })
        .grade(LAB);
    let o = outcome(&r, "accounting-kind");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("api-version"))
    );
    assert!(hint(&r, "accounting-kind", Lang::En)
        .contains("no matches for kind \"Accounting\" in version \"slinky.slurm.net/v1alpha1\""));
    assert_eq!(status(&r, "storage-config"), Status::Pass);
}

#[test]
fn the_quizs_slurm_cluster_fails_accounting_kind_and_the_rest_are_missing() {
    let r = files(&[])
        .add("apiVersion: slinky.slurm.net/v1alpha1\nkind: SlurmCluster\nmetadata:\n  name: slurm\nspec:\n  database: {host: mariadb}\n")
        .grade(LAB);
    let o = outcome(&r, "accounting-kind");
    assert_eq!(
        (o.status, o.hint.as_deref()),
        (Status::Fail, Some("quiz-kind"))
    );
    assert_eq!(o.evidence["kind"], "Accounting");
    let en = hint(&r, "accounting-kind", Lang::En);
    assert!(
        en.contains("`kind: SlurmCluster`") && en.contains("exists in no Slinky release"),
        "{en}"
    );
    assert!(hint(&r, "accounting-kind", Lang::Ja).contains("どのリリースの Slinky にもありません"));
    assert_eq!(
        outcome(&r, "storage-config").hint.as_deref(),
        Some("missing")
    );
}

#[test]
fn a_missing_host_in_static_mode_is_what_the_api_server_refuses() {
    let r = files(&["solution"])
        .edit(
            "Accounting",
            ACCT,
            storage(|s| {
                s.as_object_mut().unwrap().remove("host");
            }),
        )
        .grade(LAB);
    assert_eq!(
        outcome(&r, "storage-config").hint.as_deref(),
        Some("no-host")
    );
}

#[test]
fn a_port_that_is_not_a_number_is_bad_input_naming_the_field() {
    let e = solved()
        .edit(
            "Accounting",
            ACCT,
            storage(|s| s["port"] = json!("3306/tcp")),
        )
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(e.contains("spec.storageConfig.port"), "{e}");
    assert!(e.contains("Accounting/slurm-accounting"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Japanese reports, the command line and a live (emulated) cluster.

#[test]
fn japanese_reports_carry_values_and_hints_from_the_lab_file() {
    let r = solved()
        .edit("Accounting", ACCT, storage(|s| s["host"] = json!("mysql")))
        .grade(LAB);
    let ja = hint(&r, "storage-config", Lang::Ja);
    assert!(
        ja.contains("namespace `trainlab-slurm-accounting` にその名前の Service がありません"),
        "{ja}"
    );
    let o = outcome(&r, "storage-config");
    for s in [o.expected.as_deref().unwrap(), o.found.as_deref().unwrap()] {
        assert!(s.starts_with("spec.storageConfig: {host: "), "{s}");
    }
}

#[test]
fn snapshot_and_files_modes_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = root().join("tests/data");
    let snap = data.join("slurm-accounting/solution-state");
    let (code, out, err) = trainlab(
        dir.path(),
        None,
        &[
            "check",
            "3",
            "--snapshot",
            snap.to_str().unwrap(),
            "-o",
            "json",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "pass"), "{out}");

    let draft = root().join("labs/03-slurm-accounting/draft");
    let (code, out, _) = trainlab(
        dir.path(),
        None,
        &["check", "3", "--files", draft.to_str().unwrap()],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("`spec.storageConfig.host` is missing"),
        "{out}"
    );
}

/// An emulated kind cluster with the solution applied; `slinky` adds what `setup kind --with
/// slinky` installs (the CRDs, the operator). `secret_data`: the starter's Secret with its data,
/// as a real API server holds it.
fn live(slinky: bool, secret_data: bool) -> (Emulator, tempfile::TempDir, PathBuf) {
    let state = root().join("tests/data/slurm-accounting/solution-state");
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.yaml");
    std::fs::write(
        &secret,
        format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: mariadb-password\n  namespace: {NS}\n  uid: 5e6f7a8b-0001-4c2d-9e3f-4a5b6c7d8e01\ntype: Opaque\ndata:\n  password: Q0FOQVJZLXBhc3N3b3Jk\n"),
    )
    .unwrap();
    let data = root().join("tests/data");
    let mut paths = vec![data.join("kind-nodes"), data.join("kind-operators")];
    for f in ["namespace", "slinky", "services", "statefulsets", "pods"] {
        paths.push(state.join(format!("{f}.yaml")));
    }
    paths.push(match secret_data {
        true => secret.clone(),
        false => state.join("secrets.yaml"),
    });
    if slinky {
        paths.push(state.join("slinky-install.yaml"));
    }
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let emu = Emulator::start_from(&refs);
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
    (emu, dir, kubeconfig)
}

#[test]
fn a_live_cluster_with_slinky_grades_the_solution_without_reading_secret_data() {
    let (emu, dir, kubeconfig) = live(true, true);
    let (code, out, err) = trainlab(
        dir.path(),
        Some(&kubeconfig),
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "pass"), "{out}");
    for text in [&out, &err] {
        assert!(
            !text.contains("CANARY") && !text.contains("Q0FOQVJZ"),
            "{text}"
        );
    }
    let reqs = emu.requests();
    assert!(
        reqs.iter().all(|r| r.method == "GET"),
        "grading is read-only"
    );
    let secrets: Vec<_> = reqs
        .iter()
        .filter(|r| r.path.split('/').any(|s| s == "secrets"))
        .collect();
    assert!(!secrets.is_empty());
    for r in secrets {
        assert_eq!(r.path, format!("/api/v1/namespaces/{NS}/secrets"));
        assert!(
            r.header("accept")
                .unwrap_or_default()
                .contains("as=PartialObjectMetadataList"),
            "{r:?}"
        );
    }
}

#[test]
fn without_the_slinky_crds_every_check_is_skipped_with_the_install_command_and_exit_3() {
    let (_emu, dir, kubeconfig) = live(false, false);
    let (code, out, err) = trainlab(
        dir.path(),
        Some(&kubeconfig),
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
    );
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(statuses(&out).iter().all(|(_, s)| s == "skipped"), "{out}");
    assert!(out.contains("trainlab setup kind --with slinky"), "{out}");
    let (_, human, _) = trainlab(
        dir.path(),
        Some(&kubeconfig),
        &["check", LAB, "--request-timeout", "5s"],
    );
    assert!(
        human.contains("`trainlab setup kind --with slinky`"),
        "{human}"
    );
}

#[test]
fn the_demo_learner_left_out_the_accounting_ref_and_turned_persistence_off() {
    let r = State::load("kind-nodes")
        .add(include_str!(
            "../../../manifests/demo/03-slurm-accounting.yaml"
        ))
        .grade(LAB);
    assert_only_fails(&r, "controller-references-accounting", None);
    assert_eq!(advice_ids(&r), ["no-persistence"]);
}

//! Lab 8 `fsx-lustre`: a StorageClass for the FSx for Lustre CSI driver, a ReadWriteMany claim of
//! a size FSx offers, and a Job whose pods share it. Saved states: `solution-state` (kind: no
//! driver, the claim waits), `eks-state` + `eks-nodes` (EKS with the driver: Bound, pods running).

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use support::emulator::Emulator;
use support::state::*;
use trainlab::catalog::Catalog;
use trainlab::labs::grade_lab;
use trainlab::observe::{manifest_files, parse_file};
use trainlab::report::{Format, LabReport};
use trainlab::text::Lang;
use trainlab::verify::{LabResult, Outcome, Reason, Status, Target};

const LAB: &str = "fsx-lustre";
const STATE: [&str; 2] = ["pvc-bound", "pods-running"];
const PVC_UID: &str = "0b8f1a2c-0803-4d3e-9f4a-5b6c7d8e9f03";
const POD: &str = "fsx-readers-7xk2p";
const POD_UID: &str = "0b8f1a2c-0806-4d3e-9f4a-5b6c7d8e9f06";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// EKS with the driver, after `solve`: the claim Bound, both pods Running.
fn eks() -> State {
    State::load("fsx-lustre/eks-state").and("fsx-lustre/eks-nodes")
}

/// kind after `solve`: no driver, the claim and the pods wait.
fn kind() -> State {
    State::load("fsx-lustre/solution-state").and("kind-nodes")
}

/// The objects of a folder of the lab (`solution`, `draft`), read as the learner's files.
fn lab_files(folder: &str) -> State {
    let dir = root().join("labs/08-fsx-lustre").join(folder);
    let mut s = State::load("fsx-lustre/solution-state").into_files();
    s.objects = manifest_files(&dir)
        .unwrap()
        .iter()
        .flat_map(|f| parse_file(f).unwrap())
        .collect();
    s
}

fn message(r: &LabResult, check: &str) -> Option<String> {
    match &outcome(r, check).reason {
        Some(Reason::Message(id)) => Some(id.clone()),
        _ => None,
    }
}

fn advice_ids(r: &LabResult) -> Vec<&str> {
    r.advice.iter().map(|a| a.id.as_str()).collect()
}

/// Static mode: the state checks are skipped (needs a live cluster); the rest is returned.
fn spec_only(r: &LabResult) -> LabResult {
    for c in STATE {
        let o = outcome(r, c);
        assert_eq!(o.status, Status::Skipped, "{c}: {o:?}");
        assert!(matches!(o.reason, Some(Reason::Unavailable(_))), "{o:?}");
    }
    let mut r = r.clone();
    r.outcomes.retain(|o| !STATE.contains(&o.check.as_str()));
    r
}

/// Exactly `check` fails with `hint` in static mode (the state checks skipped).
fn files_fail(s: State, check: &str, hint: Option<&str>) -> (LabResult, Outcome) {
    let r = s.grade(LAB);
    let o = assert_only_fails(&spec_only(&r), check, hint);
    (r, o)
}

fn params(v: &mut Value) -> &mut serde_json::Map<String, Value> {
    v["parameters"].as_object_mut().unwrap()
}

fn set_param(k: &'static str, val: Value) -> impl FnOnce(&mut Value) {
    move |v| {
        params(v).insert(k.into(), val);
    }
}

fn drop_param(k: &'static str) -> impl FnOnce(&mut Value) {
    move |v| {
        params(v).remove(k);
    }
}

fn pod_spec(v: &mut Value) -> &mut Value {
    &mut v["spec"]["template"]["spec"]
}

// ---------------------------------------------------------------------------------------------
// The solution, and other right arrangements

#[test]
fn the_solved_eks_cluster_passes_every_check() {
    let r = eks().grade(LAB);
    assert_all_pass(&r);
    assert_eq!(r.profile.map(|p| p.as_str()), Some("eks"));
    let bound = outcome(&r, "pvc-bound");
    assert_eq!(
        bound.found.as_deref(),
        Some(&*format!(
            "status.phase: Bound, spec.volumeName: pvc-{PVC_UID}, status.capacity.storage: 1200Gi"
        ))
    );
    let running = outcome(&r, "pods-running");
    assert_eq!(
        running.found.as_deref(),
        Some("fsx-readers-7xk2p Running, fsx-readers-q9m4z Running")
    );
    assert_eq!(
        outcome(&r, "pods-mount-claim").found.as_deref(),
        Some("spec.template.spec.containers[0].volumeMounts[0].mountPath: /data; spec.parallelism: 2")
    );
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn on_kind_the_spec_checks_pass_and_the_state_checks_are_skipped_saying_why() {
    let r = kind().grade(LAB);
    assert!(!r.environment_incomplete());
    for c in STATE {
        let o = outcome(&r, c);
        assert_eq!(o.status, Status::Skipped, "{c}");
        assert!(
            matches!(&o.reason, Some(Reason::MissingCapability { capability, installable: false, .. }) if capability == "fsx-csi"),
            "{o:?}"
        );
        assert!(
            reason(&r, c).contains("kind nodes have no Lustre client"),
            "{}",
            reason(&r, c)
        );
    }
    let mut rest = r.clone();
    rest.outcomes.retain(|o| !STATE.contains(&o.check.as_str()));
    assert_all_pass(&rest);
}

#[test]
fn the_solution_files_pass_static_mode_and_the_draft_fails_its_todos() {
    assert_all_pass(&spec_only(&lab_files("solution").grade(LAB)));
    let r = lab_files("draft").grade(LAB);
    let spec = spec_only(&r);
    let failed: Vec<(&str, Option<&str>)> = spec
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o.check.as_str(), o.hint.as_deref()))
        .collect();
    assert_eq!(
        failed,
        [
            ("deployment-type", None),
            ("network-params", Some("malformed")),
            ("pvc-rwx-size", Some("access-mode")),
            ("pods-mount-claim", None),
        ]
    );
    assert!(hint(&r, "network-params", Lang::En).contains("\"subnet-REPLACE_ME\" in `subnetId`"));
}

#[test]
fn other_sizes_throughputs_groups_and_job_shapes_are_right_too() {
    let variants: Vec<(&str, State)> = vec![
        (
            "2400Gi",
            lab_files("solution").edit("PersistentVolumeClaim", "training-data", |v| {
                v["spec"]["resources"]["requests"]["storage"] = json!("2400Gi")
            }),
        ),
        (
            "4800Gi written as 4.6875Ti",
            lab_files("solution").edit("PersistentVolumeClaim", "training-data", |v| {
                v["spec"]["resources"]["requests"]["storage"] = json!("4.6875Ti")
            }),
        ),
        (
            "1000 MB/s/TiB",
            lab_files("solution").edit(
                "StorageClass",
                "fsx-lustre",
                set_param("perUnitStorageThroughput", json!("1000")),
            ),
        ),
        (
            "125 MB/s/TiB and two security groups",
            lab_files("solution")
                .edit(
                    "StorageClass",
                    "fsx-lustre",
                    set_param("perUnitStorageThroughput", json!("125")),
                )
                .edit(
                    "StorageClass",
                    "fsx-lustre",
                    set_param(
                        "securityGroupIds",
                        json!("sg-0123456789abcdef0,sg-0aa11bb2"),
                    ),
                ),
        ),
        (
            "an Indexed Job of 2 at another path and volume name",
            lab_files("solution").edit("Job", "fsx-readers", |v| {
                v["spec"]["completionMode"] = json!("Indexed");
                let p = pod_spec(v);
                p["volumes"][0]["name"] = json!("fsx");
                p["containers"][0]["volumeMounts"] =
                    json!([{"name": "fsx", "mountPath": "/mnt/fsx", "readOnly": true}]);
            }),
        ),
        (
            "parallelism 4 without completions",
            lab_files("solution").edit("Job", "fsx-readers", |v| {
                v["spec"]["parallelism"] = json!(4);
                v["spec"].as_object_mut().unwrap().remove("completions");
            }),
        ),
        (
            "the class named by the beta annotation, extra driver parameters",
            lab_files("solution")
                .edit("PersistentVolumeClaim", "training-data", |v| {
                    v["spec"]
                        .as_object_mut()
                        .unwrap()
                        .remove("storageClassName");
                    v["metadata"]["annotations"] =
                        json!({"volume.beta.kubernetes.io/storage-class": "fsx-lustre"});
                })
                .edit(
                    "StorageClass",
                    "fsx-lustre",
                    set_param("dataCompressionType", json!("LZ4")),
                )
                .edit(
                    "StorageClass",
                    "fsx-lustre",
                    set_param("csi.storage.k8s.io/fstype", json!("lustre")),
                ),
        ),
    ];
    for (name, s) in variants {
        let r = spec_only(&s.grade(LAB));
        let bad: Vec<_> = r
            .outcomes
            .iter()
            .filter(|o| o.status != Status::Pass)
            .collect();
        assert!(bad.is_empty(), "{name}: {bad:?}");
        assert!(r.advice.is_empty(), "{name}: {:?}", r.advice);
    }
    // On EKS too: a 4800 GiB file system at 500 MB/s/TiB.
    let r = eks()
        .edit(
            "StorageClass",
            "fsx-lustre",
            set_param("perUnitStorageThroughput", json!("500")),
        )
        .edit("PersistentVolumeClaim", "training-data", |v| {
            v["spec"]["resources"]["requests"]["storage"] = json!("4800Gi");
            v["status"]["capacity"]["storage"] = json!("4800Gi");
        })
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// fsx-provisioner

#[test]
fn another_provisioner_fails_fsx_provisioner() {
    let (r, o) = files_fail(
        lab_files("solution").edit("StorageClass", "fsx-lustre", |v| {
            v["provisioner"] = json!("efs.csi.aws.com")
        }),
        "fsx-provisioner",
        None,
    );
    assert_eq!(o.expected.as_deref(), Some("provisioner: fsx.csi.aws.com"));
    assert_eq!(o.found.as_deref(), Some("provisioner: efs.csi.aws.com"));
    assert!(hint(&r, "fsx-provisioner", Lang::En).contains("`provisioner: efs.csi.aws.com`"));
    assert!(hint(&r, "fsx-provisioner", Lang::Ja).contains("削除して作り直します"));
}

#[test]
fn an_unquoted_throughput_is_refused_by_the_api_server() {
    let (r, o) = files_fail(
        lab_files("solution").edit(
            "StorageClass",
            "fsx-lustre",
            set_param("perUnitStorageThroughput", json!(250)),
        ),
        "fsx-provisioner",
        Some("not-string"),
    );
    assert_eq!(
        o.found.as_deref(),
        Some("parameters.perUnitStorageThroughput: 250")
    );
    assert_eq!(
        o.expected.as_deref(),
        Some("parameters.perUnitStorageThroughput: \"250\"")
    );
    let en = hint(&r, "fsx-provisioner", Lang::En);
    assert!(
        en.contains("json: cannot unmarshal number into Go struct field StorageClass.parameters of type string"),
        "{en}"
    );
    assert!(en.contains("`perUnitStorageThroughput: \"250\"`"), "{en}");
    // A boolean is refused the same way, named as Go names it.
    let r = lab_files("solution")
        .edit(
            "StorageClass",
            "fsx-lustre",
            set_param("efaEnabled", json!(false)),
        )
        .grade(LAB);
    assert_eq!(outcome(&r, "fsx-provisioner").evidence["type"], "bool");
}

#[test]
fn a_storage_class_of_a_removed_version_fails_fsx_provisioner() {
    let (r, _) = files_fail(
        lab_files("solution").edit("StorageClass", "fsx-lustre", |v| {
            v["apiVersion"] = json!("storage.k8s.io/v1beta1")
        }),
        "fsx-provisioner",
        Some("api-version"),
    );
    assert!(hint(&r, "fsx-provisioner", Lang::En)
        .contains("`no matches for kind \"StorageClass\" in version \"storage.k8s.io/v1beta1\"`"));
}

// ---------------------------------------------------------------------------------------------
// deployment-type

#[test]
fn a_scratch_file_system_fails_deployment_type() {
    let (r, o) = files_fail(
        lab_files("solution")
            .edit(
                "StorageClass",
                "fsx-lustre",
                set_param("deploymentType", json!("SCRATCH_2")),
            )
            .edit(
                "StorageClass",
                "fsx-lustre",
                drop_param("perUnitStorageThroughput"),
            ),
        "deployment-type",
        None,
    );
    assert_eq!(
        o.found.as_deref(),
        Some("deploymentType: SCRATCH_2, perUnitStorageThroughput: —")
    );
    assert!(hint(&r, "deployment-type", Lang::En).starts_with("`deploymentType` is `SCRATCH_2`."));
}

#[test]
fn no_deployment_type_is_scratch_1() {
    let (r, _) = files_fail(
        lab_files("solution").edit("StorageClass", "fsx-lustre", drop_param("deploymentType")),
        "deployment-type",
        Some("unset"),
    );
    assert!(hint(&r, "deployment-type", Lang::En).contains("FSx creates `SCRATCH_1`"));
}

#[test]
fn a_throughput_persistent_2_does_not_offer_fails_deployment_type() {
    let (r, o) = files_fail(
        lab_files("solution").edit(
            "StorageClass",
            "fsx-lustre",
            set_param("perUnitStorageThroughput", json!("200")),
        ),
        "deployment-type",
        Some("throughput"),
    );
    assert_eq!(
        o.expected.as_deref(),
        Some("deploymentType: PERSISTENT_2, perUnitStorageThroughput: 125 | 250 | 500 | 1000")
    );
    assert!(hint(&r, "deployment-type", Lang::En).contains("`InvalidPerUnitStorageThroughput`"));
    files_fail(
        lab_files("solution").edit(
            "StorageClass",
            "fsx-lustre",
            drop_param("perUnitStorageThroughput"),
        ),
        "deployment-type",
        Some("no-throughput"),
    );
    files_fail(
        lab_files("solution").edit(
            "StorageClass",
            "fsx-lustre",
            set_param("perUnitStorageThroughput", json!("250MB")),
        ),
        "deployment-type",
        Some("throughput"),
    );
}

/// aws-fsx-csi-driver issue #412: FSx refuses the legacy S3 link for PERSISTENT_2.
#[test]
fn an_s3_import_path_on_persistent_2_fails_deployment_type_with_dra_advice() {
    let (r, o) = files_fail(
        lab_files("solution").edit(
            "StorageClass",
            "fsx-lustre",
            set_param("s3ImportPath", json!("s3://bucket/training-data")),
        ),
        "deployment-type",
        Some("s3-link"),
    );
    assert_eq!(
        o.found.as_deref(),
        Some("deploymentType: PERSISTENT_2; s3ImportPath: s3://bucket/training-data")
    );
    assert!(hint(&r, "deployment-type", Lang::En)
        .contains("Linking a Persistent 2 file system to an S3 bucket using the LustreConfiguration is not supported"));
    assert_eq!(advice_ids(&r), ["dra"]);
}

/// The parameters of an unmerged driver change (INTELLIGENT_TIERING) are read by no released
/// aws-fsx-csi-driver (v1.9.0 `pkg/driver/controller.go`): advice names them as ignored.
#[test]
fn unreleased_driver_parameters_are_ignored_parameters() {
    let r = lab_files("solution")
        .edit("StorageClass", "fsx-lustre", |v| {
            for (k, val) in [
                ("throughputCapacity", "4000"),
                (
                    "dataReadCacheSizingMode",
                    "PROPORTIONAL_TO_THROUGHPUT_CAPACITY",
                ),
                ("dataReadCacheSizeGiB", "1000"),
                ("skipFinalBackup", "true"),
            ] {
                params(v).insert(k.into(), json!(val));
            }
        })
        .grade(LAB);
    assert_all_pass(&spec_only(&r));
    assert_eq!(advice_ids(&r), ["ignored-parameters"]);
    assert_eq!(
        r.advice[0].evidence["params"],
        "dataReadCacheSizeGiB, dataReadCacheSizingMode, skipFinalBackup, throughputCapacity"
    );
    // Every key of the reference StorageClass is one the released driver reads.
    assert!(lab_files("solution").grade(LAB).advice.is_empty());
}

/// The EKS answer differs from kind's only in the ids it takes from the site (`solution-eks/`:
/// `${site.subnet_id}`, `${site.security_group_ids}`), and passes with the EKS profile's
/// parameters, as `trainlab lint` grades it.
#[test]
fn the_eks_answer_is_kinds_with_the_sites_ids() {
    let catalog = Catalog::embedded().unwrap();
    let b = catalog.get(LAB).unwrap();
    assert!(b.has_overlay("solution", "eks"));
    let [(_, kind)] = &files_of(LAB, "solution", "kind")[..] else {
        panic!("one file")
    };
    let [(_, eks)] = &files_of(LAB, "solution", "eks")[..] else {
        panic!("one file")
    };
    let value_lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .map(|l| l.split(" #").next().unwrap().trim_end().to_string())
            .collect()
    };
    let (k, e) = (value_lines(kind), value_lines(eks));
    assert_eq!(k.len(), e.len());
    let differ: Vec<(&String, &String)> = k.iter().zip(&e).filter(|(a, b)| a != b).collect();
    assert_eq!(
        differ.iter().map(|(_, b)| b.trim()).collect::<Vec<_>>(),
        [
            "subnetId: subnet-0a1b2c3d4e5f60718",
            "securityGroupIds: sg-0f1e2d3c4b5a69788"
        ]
    );
    let mut s = lab_files("solution");
    s.objects = trainlab::observe::parse_text(eks, "eks.yaml").unwrap();
    let r = grade_lab(
        b,
        &s.observed(),
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .unwrap();
    assert_all_pass(&spec_only(&r));
    assert!(r.advice.is_empty(), "{:?}", r.advice);
}

#[test]
fn the_quizs_data_repository_associations_key_is_ignored_by_the_driver() {
    let r = lab_files("solution")
        .edit(
            "StorageClass",
            "fsx-lustre",
            set_param(
                "dataRepositoryAssociations",
                json!("s3://bucket/training-data"),
            ),
        )
        .grade(LAB);
    assert_all_pass(&spec_only(&r));
    assert_eq!(advice_ids(&r), ["ignored-parameters", "dra"]);
    let rep = LabReport::new(&r, Lang::En);
    assert!(
        rep.advice[0].text.contains("dataRepositoryAssociations"),
        "{}",
        rep.advice[0].text
    );
    assert!(rep.advice[1]
        .text
        .contains("CreateDataRepositoryAssociation"));
}

// ---------------------------------------------------------------------------------------------
// network-params

/// An edit of the StorageClass.
type Edit = Box<dyn FnOnce(&mut Value)>;

#[test]
fn the_network_ids_fail_network_params_each_way() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(drop_param("subnetId")),
            "no-subnet",
            "SubnetId is required",
        ),
        (
            Box::new(set_param(
                "subnetId",
                json!("subnet-0123456789abcdef0,subnet-0fedcba987654321f"),
            )),
            "several-subnets",
            "one subnet (one Availability Zone)",
        ),
        (
            Box::new(set_param(
                "securityGroupIds",
                json!("sg-0123456789abcdef0, sg-0aa11bb2"),
            )),
            "malformed",
            "\" sg-0aa11bb2\" in `securityGroupIds`",
        ),
        (
            Box::new(drop_param("securityGroupIds")),
            "no-security-group",
            "TCP 988 and 1018–1023",
        ),
    ];
    for (edit, h, text) in cases {
        let (r, _) = files_fail(
            lab_files("solution").edit("StorageClass", "fsx-lustre", edit),
            "network-params",
            Some(h),
        );
        assert!(
            hint(&r, "network-params", Lang::En).contains(text),
            "{h}: {}",
            hint(&r, "network-params", Lang::En)
        );
    }
}

#[test]
fn ids_given_for_the_cluster_must_be_the_ones_used() {
    let (_, o) = files_fail(
        lab_files("solution").param("subnet_id", "subnet-0a1b2c3d4e5f60718"),
        "network-params",
        Some("other-subnet"),
    );
    assert_eq!(
        o.expected.as_deref(),
        Some("subnetId: subnet-0a1b2c3d4e5f60718, securityGroupIds: sg-<id>[,sg-<id>…]")
    );
    files_fail(
        lab_files("solution").param("security_group_ids", "sg-0f1e2d3c4b5a69788"),
        "network-params",
        Some("other-security-group"),
    );
    // The EKS profile's placeholders are no ids: with `--profile eks` nothing is compared.
    let catalog = Catalog::embedded().unwrap();
    let r = grade_lab(
        catalog.get(LAB).unwrap(),
        &lab_files("solution").observed(),
        &Target::for_lab(LAB),
        &BTreeMap::new(),
        Some(trainlab::facts::Profile::Eks),
    )
    .unwrap();
    assert_eq!(outcome(&r, "network-params").status, Status::Pass);
    // The ids the EKS cluster was given are the ones its StorageClass uses.
    let r = eks()
        .param("subnet_id", "subnet-0a1b2c3d4e5f60718")
        .param("security_group_ids", "sg-0f1e2d3c4b5a69788")
        .grade(LAB);
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// pvc-rwx-size

fn claim(f: impl FnOnce(&mut Value)) -> State {
    lab_files("solution").edit("PersistentVolumeClaim", "training-data", f)
}

fn storage(size: &str) -> State {
    let size = size.to_string();
    claim(move |v| v["spec"]["resources"]["requests"]["storage"] = json!(size))
}

#[test]
fn a_read_write_once_claim_fails_pvc_rwx_size() {
    let (r, o) = files_fail(
        claim(|v| v["spec"]["accessModes"] = json!(["ReadWriteOnce"])),
        "pvc-rwx-size",
        Some("access-mode"),
    );
    assert_eq!(
        o.found.as_deref(),
        Some("accessModes: [ReadWriteOnce], storageClassName: fsx-lustre, storage: 1200Gi")
    );
    assert!(hint(&r, "pvc-rwx-size", Lang::En).contains("mounts on one node only"));
}

#[test]
fn a_claim_the_api_server_refuses_fails_pvc_rwx_size() {
    let (r, _) = files_fail(
        claim(|v| {
            v["spec"].as_object_mut().unwrap().remove("accessModes");
        }),
        "pvc-rwx-size",
        Some("rejected"),
    );
    assert!(hint(&r, "pvc-rwx-size", Lang::En)
        .contains("spec.accessModes: Required value: at least 1 access mode is required"));
    let (r, _) = files_fail(
        claim(|v| {
            v["spec"].as_object_mut().unwrap().remove("resources");
        }),
        "pvc-rwx-size",
        Some("rejected"),
    );
    assert!(hint(&r, "pvc-rwx-size", Lang::En).contains("spec.resources[storage]: Required value"));
}

#[test]
fn a_claim_of_another_class_fails_pvc_rwx_size() {
    let (r, _) = files_fail(
        claim(|v| {
            v["spec"]
                .as_object_mut()
                .unwrap()
                .remove("storageClassName");
        }),
        "pvc-rwx-size",
        Some("no-storage-class"),
    );
    assert!(hint(&r, "pvc-rwx-size", Lang::En).contains("default StorageClass"));
    files_fail(
        claim(|v| v["spec"]["storageClassName"] = json!("gp3")),
        "pvc-rwx-size",
        Some("storage-class"),
    );
}

#[test]
fn a_size_fsx_does_not_offer_fails_pvc_rwx_size_with_what_the_driver_makes_of_it() {
    for (size, gib, rounded) in [
        ("1.2Ti", "1228.8", "2400"),
        ("1000Gi", "1000", "1200"),
        ("3000Gi", "3000", "4800"),
        ("1Ti", "1024", "1200"),
    ] {
        let (r, o) = files_fail(storage(size), "pvc-rwx-size", Some("size"));
        assert_eq!(o.evidence["rounded"], rounded, "{size}");
        assert_eq!(o.evidence["request_gib"], gib, "{size}");
        assert_eq!(
            o.expected.as_deref(),
            Some("accessModes: [ReadWriteMany], storageClassName: fsx-lustre, storage: 1200Gi | 2400Gi | 2400Gi × n")
        );
        let en = hint(&r, "pvc-rwx-size", Lang::En);
        assert!(
            en.contains(&format!(
                "({gib} GiB) is not a size a PERSISTENT_2 file system comes in"
            )) && en.contains(&format!("creates {rounded} GiB")),
            "{en}"
        );
    }
}

#[test]
fn sizes_follow_the_deployment_type_the_class_asks_for() {
    // SCRATCH_1 (no type) steps by 3600 after 2400: 4800Gi becomes 7200 GiB. Both checks are right.
    let r = storage("4800Gi")
        .edit("StorageClass", "fsx-lustre", drop_param("deploymentType"))
        .grade(LAB);
    let o = outcome(&r, "pvc-rwx-size");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("size")));
    assert_eq!(o.evidence["rounded"], "7200");
    assert_eq!(o.evidence["deployment_type"], "SCRATCH_1");
    assert_eq!(
        outcome(&r, "deployment-type").hint.as_deref(),
        Some("unset")
    );
}

// ---------------------------------------------------------------------------------------------
// pods-mount-claim

fn job(f: impl FnOnce(&mut Value)) -> State {
    lab_files("solution").edit("Job", "fsx-readers", f)
}

#[test]
fn a_job_without_the_claim_fails_pods_mount_claim() {
    let (r, o) = files_fail(
        job(|v| {
            let p = pod_spec(v);
            p["volumes"] = json!([{"name": "training-data", "emptyDir": {}}]);
        }),
        "pods-mount-claim",
        None,
    );
    assert_eq!(
        o.found.as_deref(),
        Some("spec.template.spec.volumes: training-data: emptyDir")
    );
    assert!(hint(&r, "pods-mount-claim", Lang::En)
        .contains("`persistentVolumeClaim: {claimName: training-data}`"));
    files_fail(
        job(|v| {
            pod_spec(v)["volumes"][0]["persistentVolumeClaim"]["claimName"] = json!("training-dat");
        }),
        "pods-mount-claim",
        Some("other-claim"),
    );
}

#[test]
fn a_claim_volume_no_container_mounts_fails_pods_mount_claim() {
    let (_, o) = files_fail(
        job(|v| {
            pod_spec(v)["containers"][0]
                .as_object_mut()
                .unwrap()
                .remove("volumeMounts");
        }),
        "pods-mount-claim",
        Some("not-mounted"),
    );
    assert_eq!(o.evidence["volume"], "spec.template.spec.volumes[0]");
}

#[test]
fn a_job_the_api_server_refuses_fails_pods_mount_claim() {
    let (r, _) = files_fail(
        job(|v| pod_spec(v)["containers"][0]["volumeMounts"][0]["name"] = json!("data")),
        "pods-mount-claim",
        Some("rejected"),
    );
    assert!(hint(&r, "pods-mount-claim", Lang::En)
        .contains("spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"data\""));
    let (r, _) = files_fail(
        job(|v| {
            pod_spec(v).as_object_mut().unwrap().remove("restartPolicy");
        }),
        "pods-mount-claim",
        Some("rejected"),
    );
    assert!(hint(&r, "pods-mount-claim", Lang::En).contains("spec.template.spec.restartPolicy"));
}

#[test]
fn pods_that_run_one_at_a_time_fail_pods_mount_claim() {
    let (_, o) = files_fail(
        job(|v| {
            v["spec"].as_object_mut().unwrap().remove("parallelism");
        }),
        "pods-mount-claim",
        Some("one-pod"),
    );
    assert_eq!(
        o.found.as_deref(),
        Some("spec.parallelism: 1, spec.completions: 2")
    );
    files_fail(
        job(|v| v["spec"]["completions"] = json!(1)),
        "pods-mount-claim",
        Some("one-pod"),
    );
}

// ---------------------------------------------------------------------------------------------
// pvc-bound and pods-running on EKS

fn pending_claim(s: State) -> State {
    s.edit("PersistentVolumeClaim", "training-data", |v| {
        v["status"] = json!({"phase": "Pending"});
        v["spec"].as_object_mut().unwrap().remove("volumeName");
    })
    .edit_all("Pod", |v| {
        v["spec"].as_object_mut().unwrap().remove("nodeName");
        v["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."}]});
    })
}

fn pvc_event(kind: &str, reason: &str, message: &str, at: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Event\nmetadata: {{name: training-data.{reason}, namespace: trainlab-fsx-lustre, uid: 9e0e0e0e-0000-4000-8000-{:0>12}}}\ninvolvedObject: {{kind: PersistentVolumeClaim, name: training-data, namespace: trainlab-fsx-lustre, uid: {PVC_UID}}}\ntype: {kind}\nreason: {reason}\nmessage: '{message}'\nlastTimestamp: '{at}'\n",
        reason.len()
    )
}

#[test]
fn a_claim_fsx_cannot_create_fails_pvc_bound() {
    let msg = "failed to provision volume with StorageClass \"fsx-lustre\": rpc error: code = Internal desc = Could not create volume \"pvc-0b8f1a2c\": CreateFileSystem failed: InvalidNetworkSettings: The subnet ID does not exist";
    let r = pending_claim(eks())
        .add(&pvc_event(
            "Warning",
            "ProvisioningFailed",
            &msg.replace('\'', "''"),
            "2026-12-02T11:40:00Z",
        ))
        .grade(LAB);
    let bad: Vec<(&str, Status, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status != Status::Pass)
        .map(|o| (o.check.as_str(), o.status, o.hint.as_deref()))
        .collect();
    // The pods wait for the claim: pods-running says so, pvc-bound carries the cause.
    assert_eq!(
        bad,
        [
            ("pvc-bound", Status::Fail, Some("provisioning-failed")),
            ("pods-running", Status::Fail, Some("claim")),
        ]
    );
    let en = hint(&r, "pvc-bound", Lang::En);
    assert!(
        en.contains("InvalidNetworkSettings: The subnet ID does not exist"),
        "{en}"
    );
    assert!(hint(&r, "pods-running", Lang::Ja).contains("pvc-bound"));
}

#[test]
fn a_claim_fsx_is_still_creating_is_pending() {
    let r = pending_claim(eks())
        .add(&pvc_event("Normal", "Provisioning", "External provisioner is provisioning volume for claim \"trainlab-fsx-lustre/training-data\"", "2026-12-02T11:21:00Z"))
        .grade(LAB);
    assert_eq!(status(&r, "pvc-bound"), Status::Pending);
    assert_eq!(message(&r, "pvc-bound").as_deref(), Some("provisioning"));
    assert!(reason(&r, "pvc-bound").contains("usually 5–10 minutes"));
    assert_eq!(status(&r, "pods-running"), Status::Pending);
    assert_eq!(
        message(&r, "pods-running").as_deref(),
        Some("waiting-claim")
    );
    // The provisioner's own timeout while FSx creates the file system: it retries.
    let r = pending_claim(eks())
        .add(&pvc_event("Warning", "ProvisioningFailed", "failed to provision volume with StorageClass \"fsx-lustre\": rpc error: code = DeadlineExceeded desc = context deadline exceeded", "2026-12-02T11:31:00Z"))
        .grade(LAB);
    assert_eq!(status(&r, "pvc-bound"), Status::Pending);
    assert_eq!(
        message(&r, "pvc-bound").as_deref(),
        Some("provisioning-retry")
    );
}

#[test]
fn a_claim_waiting_for_its_first_consumer_is_pending() {
    let r = pending_claim(eks())
        .edit("StorageClass", "fsx-lustre", |v| {
            v["volumeBindingMode"] = json!("WaitForFirstConsumer")
        })
        .add(&pvc_event(
            "Normal",
            "WaitForFirstConsumer",
            "waiting for first consumer to be created before binding",
            "2026-12-02T11:45:00Z",
        ))
        .grade(LAB);
    assert_eq!(status(&r, "pvc-bound"), Status::Pending);
    assert_eq!(
        message(&r, "pvc-bound").as_deref(),
        Some("waiting-consumer")
    );
    assert!(reason(&r, "pvc-bound").contains("`volumeBindingMode: WaitForFirstConsumer`"));
}

#[test]
fn a_claim_that_cannot_get_fsx_fails_pvc_bound_naming_the_spec_checks() {
    let r = pending_claim(eks())
        .edit(
            "StorageClass",
            "fsx-lustre",
            set_param("s3ImportPath", json!("s3://bucket/data")),
        )
        .grade(LAB);
    let o = outcome(&r, "pvc-bound");
    assert_eq!((o.status, o.hint.as_deref()), (Status::Fail, Some("spec")));
    assert_eq!(o.evidence["checks"], "deployment-type");
    // A SCRATCH type or a rounded size would still bind: still provisioning, not blamed.
    let r = pending_claim(eks())
        .edit(
            "StorageClass",
            "fsx-lustre",
            set_param("deploymentType", json!("SCRATCH_2")),
        )
        .grade(LAB);
    assert_eq!(status(&r, "pvc-bound"), Status::Pending);
}

#[test]
fn a_lost_claim_fails_pvc_bound() {
    let r = eks()
        .edit("PersistentVolumeClaim", "training-data", |v| {
            v["status"]["phase"] = json!("Lost")
        })
        .grade(LAB);
    assert_eq!(outcome(&r, "pvc-bound").hint.as_deref(), Some("lost"));
    assert_eq!(outcome(&r, "pods-running").hint.as_deref(), Some("claim"));
}

#[test]
fn a_crashed_reader_fails_pods_running_only() {
    let r = eks()
        .edit("Pod", POD, |v| {
            v["status"]["phase"] = json!("Failed");
            v["status"]["containerStatuses"][0]["state"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
                "message": "sh: can't create /data/readers.log: Permission denied"}});
        })
        .grade(LAB);
    let o = assert_only_fails(&r, "pods-running", Some("crashed"));
    assert_eq!(
        o.found.as_deref(),
        Some("fsx-readers-7xk2p/reader: Error (exit 1)")
    );
    assert!(hint(&r, "pods-running", Lang::En)
        .contains("`kubectl delete job fsx-readers -n trainlab-fsx-lustre`"));
}

#[test]
fn a_reader_stuck_pulling_its_image_fails_pods_running() {
    let r = eks()
        .edit("Pod", POD, |v| {
            v["status"]["phase"] = json!("Pending");
            v["status"]["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "ImagePullBackOff",
                "message": "Back-off pulling image \"busybox:1.63\""}});
        })
        .grade(LAB);
    assert_only_fails(&r, "pods-running", Some("stuck"));
}

#[test]
fn a_volume_that_does_not_mount_is_pending_with_the_kubelets_words() {
    let r = eks()
        .edit_all("Pod", |v| {
            v["status"]["phase"] = json!("Pending");
            v["status"]["containerStatuses"][0]["state"] = json!({"waiting": {"reason": "ContainerCreating"}});
        })
        .add(&format!(
            "apiVersion: v1\nkind: Event\nmetadata: {{name: {POD}.mount, namespace: trainlab-fsx-lustre}}\ninvolvedObject: {{kind: Pod, name: {POD}, uid: {POD_UID}}}\ntype: Warning\nreason: FailedMount\nmessage: 'MountVolume.SetUp failed for volume \"pvc-0b8f\" : rpc error: code = Internal desc = Could not mount \"fs-0123.fsx.us-west-2.amazonaws.com@tcp:/abcdefgh\" at \"/var/lib/kubelet/pods/x/volumes/kubernetes.io~csi/pvc-0b8f/mount\": mount failed: exit status 5'\nlastTimestamp: '2026-12-02T11:35:00Z'\n"
        ))
        .grade(LAB);
    assert_eq!(status(&r, "pods-running"), Status::Pending);
    assert_eq!(
        message(&r, "pods-running").as_deref(),
        Some("mount-failing")
    );
    let why = reason(&r, "pods-running");
    assert!(
        why.contains("Pod `fsx-readers-7xk2p` cannot mount its volume yet")
            && why.contains("TCP 988"),
        "{why}"
    );
}

#[test]
fn a_completed_job_passes_and_pods_it_does_not_own_are_ignored() {
    let done = eks()
        .edit("Job", "fsx-readers", |v| {
            v["status"] =
                json!({"succeeded": 2, "conditions": [{"type": "Complete", "status": "True"}]});
        })
        .edit_all("Pod", |v| v["status"]["phase"] = json!("Succeeded"));
    assert_all_pass(&done.grade(LAB));
    // Same names and labels, another owner uid: not the Job's pods.
    let r = eks()
        .edit_all("Pod", |v| {
            v["metadata"]["ownerReferences"][0]["uid"] =
                json!("ffffffff-0000-4000-8000-000000000000")
        })
        .grade(LAB);
    assert_eq!(status(&r, "pods-running"), Status::Pending);
    assert_eq!(message(&r, "pods-running").as_deref(), Some("no-pods"));
}

// ---------------------------------------------------------------------------------------------
// Missing objects, bad input, workshops

#[test]
fn each_missing_object_fails_its_checks_with_the_labs_missing_text() {
    let r = eks().remove(|o| o.kind() == "StorageClass").grade(LAB);
    for c in ["fsx-provisioner", "deployment-type", "network-params"] {
        assert_eq!(outcome(&r, c).hint.as_deref(), Some("missing"), "{c}");
    }
    assert!(hint(&r, "fsx-provisioner", Lang::En)
        .starts_with("There is no StorageClass `fsx-lustre` (`apiVersion: storage.k8s.io/v1`)."));
    // Without the class the claim is judged by the lab's PERSISTENT_2 sizes: 1200Gi is fine.
    assert_eq!(status(&r, "pvc-rwx-size"), Status::Pass);
    let r = lab_files("solution")
        .remove(|o| o.kind() == "Job")
        .grade(LAB);
    assert_eq!(
        outcome(&r, "pods-mount-claim").hint.as_deref(),
        Some("missing")
    );
    assert!(hint(&r, "pods-mount-claim", Lang::Ja).contains("Job `fsx-readers`"));
    let r = eks()
        .remove(|o| o.kind() == "PersistentVolumeClaim")
        .grade(LAB);
    for c in ["pvc-rwx-size", "pvc-bound"] {
        assert_eq!(outcome(&r, c).hint.as_deref(), Some("missing"), "{c}");
    }
    assert_eq!(outcome(&r, "pvc-rwx-size").found.as_deref(), Some("—"));
}

#[test]
fn malformed_objects_are_bad_input_naming_the_field() {
    let err = lab_files("solution")
        .edit("StorageClass", "fsx-lustre", |v| {
            v["parameters"] = json!(["deploymentType"])
        })
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("parameters"), "{err}");
    let err = storage("lots").try_grade(LAB).unwrap_err().to_string();
    assert!(err.contains("spec.resources.requests.storage"), "{err}");
    let err = job(|v| v["spec"]["parallelism"] = json!("two"))
        .try_grade(LAB)
        .unwrap_err()
        .to_string();
    assert!(err.contains("spec.parallelism"), "{err}");
}

#[test]
fn in_a_workshop_the_class_carries_the_learners_prefix() {
    let catalog = Catalog::embedded().unwrap();
    let mut target = Target::for_lab(LAB);
    target.name_prefix = "alice-".into();
    let grade = |s: State| {
        grade_lab(
            catalog.get(LAB).unwrap(),
            &s.observed(),
            &target,
            &BTreeMap::new(),
            None,
        )
        .unwrap()
    };
    let r = grade(eks());
    assert_eq!(
        outcome(&r, "fsx-provisioner").hint.as_deref(),
        Some("missing")
    );
    assert_eq!(
        outcome(&r, "fsx-provisioner").expected.as_deref(),
        Some("storage.k8s.io/v1 StorageClass alice-fsx-lustre")
    );
    let r = grade(
        eks()
            .edit("StorageClass", "fsx-lustre", |v| {
                v["metadata"]["name"] = json!("alice-fsx-lustre")
            })
            .edit("PersistentVolumeClaim", "training-data", |v| {
                v["spec"]["storageClassName"] = json!("alice-fsx-lustre")
            }),
    );
    assert_all_pass(&r);
}

// ---------------------------------------------------------------------------------------------
// Live (the API emulator), snapshot and demo

fn run(args: &[&str], kubeconfig: &Path) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_trainlab"))
        .env("KUBECONFIG", kubeconfig)
        .env(
            "TRAINLAB_CACHE_DIR",
            crate::support::cache_beside(kubeconfig),
        )
        .env("NO_COLOR", "1")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (out.status.code().unwrap_or(-1), v, stderr)
}

fn statuses(report: &Value) -> Vec<(String, String)> {
    report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["check"].as_str().unwrap().into(),
                o["status"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn a_live_eks_cluster_is_graded_with_reads_only() {
    let data = root().join("tests/data");
    let emu = Emulator::start_from(&[
        &data.join("fsx-lustre/eks-nodes"),
        &data.join("fsx-lustre/eks-state"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = emu.kubeconfig(dir.path(), "eks-trainlab");
    let (code, report, stderr) = run(
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
        &kubeconfig,
    );
    assert_eq!(code, 0, "{report}\n{stderr}");
    assert_eq!(report["profile"], "eks");
    assert!(
        statuses(&report).iter().all(|(_, s)| s == "pass"),
        "{report}"
    );
    let reqs = emu.requests();
    assert!(reqs.iter().all(|r| r.method == "GET"), "{reqs:#?}");
    for path in [
        "/apis/storage.k8s.io/v1/storageclasses",
        "/api/v1/namespaces/trainlab-fsx-lustre/persistentvolumeclaims",
        "/api/v1/namespaces/trainlab-fsx-lustre/events",
    ] {
        assert!(reqs.iter().any(|r| r.path == path), "{path}: {reqs:#?}");
    }
}

#[test]
fn a_live_kind_cluster_skips_the_state_checks_saying_why() {
    let data = root().join("tests/data");
    let emu = Emulator::start_from(&[
        &data.join("kind-nodes"),
        &data.join("kind-operators"),
        &data.join("fsx-lustre/solution-state"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = emu.kubeconfig(dir.path(), "kind-trainlab");
    let (code, report, stderr) = run(
        &["check", LAB, "--request-timeout", "5s", "-o", "json"],
        &kubeconfig,
    );
    assert_eq!(code, 0, "{report}\n{stderr}");
    let st = statuses(&report);
    for (check, s) in &st {
        let want = if STATE.contains(&check.as_str()) {
            "skipped"
        } else {
            "pass"
        };
        assert_eq!(s, want, "{check}: {report}");
    }
    let skipped = &report["outcomes"][5]["reason"];
    assert!(
        skipped
            .as_str()
            .unwrap()
            .contains("kind nodes have no Lustre client"),
        "{skipped}"
    );
}

#[test]
fn a_snapshot_graded_as_kind_skips_the_state_checks() {
    let dir = tempfile::tempdir().unwrap();
    for rel in ["fsx-lustre/eks-state", "fsx-lustre/eks-nodes"] {
        for f in manifest_files(&root().join("tests/data").join(rel)).unwrap() {
            let to = dir.path().join(format!(
                "{}-{}",
                rel.replace('/', "-"),
                f.file_name().unwrap().to_string_lossy()
            ));
            std::fs::copy(&f, to).unwrap();
        }
    }
    let snap = dir.path().display().to_string();
    let nowhere = Path::new("/nonexistent/kubeconfig");
    let (code, report, _) = run(&["check", LAB, "--snapshot", &snap, "-o", "json"], nowhere);
    assert_eq!(code, 0);
    assert!(
        statuses(&report).iter().all(|(_, s)| s == "pass"),
        "{report}"
    );
    let (code, report, _) = run(
        &[
            "check",
            LAB,
            "--snapshot",
            &snap,
            "--profile",
            "kind",
            "-o",
            "json",
        ],
        nowhere,
    );
    assert_eq!(code, 0);
    for (check, s) in statuses(&report) {
        assert_eq!(
            s,
            if STATE.contains(&check.as_str()) {
                "skipped"
            } else {
                "pass"
            },
            "{check}"
        );
    }
}

#[test]
fn the_demo_learner_asked_for_a_persistent_1_throughput_and_1_2ti() {
    let mut s = kind();
    s.objects = ["00-nodes.yaml", "08-fsx-lustre.yaml"]
        .iter()
        .flat_map(|f| parse_file(&root().join("manifests/demo").join(f)).unwrap())
        .collect();
    let r = s.grade(LAB);
    let failed: Vec<(&str, Option<&str>)> = r
        .outcomes
        .iter()
        .filter(|o| o.status == Status::Fail)
        .map(|o| (o.check.as_str(), o.hint.as_deref()))
        .collect();
    assert_eq!(
        failed,
        [
            ("deployment-type", Some("throughput")),
            ("pvc-rwx-size", Some("size"))
        ]
    );
    assert_eq!(outcome(&r, "pvc-rwx-size").evidence["rounded"], "2400");
    for c in STATE {
        assert_eq!(status(&r, c), Status::Skipped, "{c}");
    }
}

/// Three consecutive all-lowercase ASCII words: an English sentence built in Rust, which a
/// Japanese report must not carry in `expected`/`found` (the CLI test's heuristic).
fn english_sentence(text: &str) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let plain = |w: &&str| {
        let w = w.trim_matches(|c: char| matches!(c, ',' | ';' | '.' | ':' | '(' | ')'));
        w.len() >= 2 && w.chars().all(|c| c.is_ascii_lowercase())
    };
    words
        .windows(3)
        .find(|w| w.iter().all(plain))
        .map(|w| w.join(" "))
}

#[test]
fn japanese_reports_carry_only_values_paths_and_names() {
    let states: Vec<(&str, LabResult)> = vec![
        ("eks", eks().grade(LAB)),
        ("kind", kind().grade(LAB)),
        ("draft", lab_files("draft").grade(LAB)),
        ("size", storage("1.2Ti").grade(LAB)),
        (
            "s3",
            lab_files("solution")
                .edit(
                    "StorageClass",
                    "fsx-lustre",
                    set_param("s3ImportPath", json!("s3://b/p")),
                )
                .grade(LAB),
        ),
        (
            "no-subnet",
            lab_files("solution")
                .edit("StorageClass", "fsx-lustre", drop_param("subnetId"))
                .grade(LAB),
        ),
        (
            "one-pod",
            job(|v| v["spec"]["parallelism"] = json!(1)).grade(LAB),
        ),
        ("pending", pending_claim(eks()).grade(LAB)),
        (
            "lost",
            eks()
                .edit("PersistentVolumeClaim", "training-data", |v| {
                    v["status"]["phase"] = json!("Lost")
                })
                .grade(LAB),
        ),
        ("missing", eks().remove(|o| o.kind() == "Job").grade(LAB)),
    ];
    let mut english = Vec::new();
    for (name, r) in &states {
        let json: Value = serde_json::from_str(&trainlab::report::render(
            &[LabReport::new(r, Lang::Ja)],
            Format::Json,
            false,
        ))
        .unwrap();
        for o in json["outcomes"].as_array().unwrap() {
            for field in ["expected", "found"] {
                if let Some(words) = o[field].as_str().and_then(english_sentence) {
                    english.push(format!("{name} {} {field}: «{words}»", o["check"]));
                }
            }
        }
        // Every failure's hint is rendered in Japanese with its placeholders filled.
        for o in LabReport::new(r, Lang::Ja)
            .outcomes
            .iter()
            .filter(|o| o.status == Status::Fail)
        {
            let h = o.hint.clone().unwrap_or_default();
            assert!(
                !h.is_empty() && h.chars().any(|c| c > '\u{3000}'),
                "{name} {}: {h}",
                o.check
            );
            assert!(
                trainlab::catalog::placeholders(&h).is_empty(),
                "{name} {}: {h}",
                o.check
            );
        }
    }
    assert!(
        english.is_empty(),
        "English in a ja report:\n{}",
        english.join("\n")
    );
}

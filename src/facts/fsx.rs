//! Amazon FSx for Lustre as the FSx CSI driver creates it: deployment types, per-unit storage
//! throughput, the storage capacities FSx accepts, and how the driver rounds a claim's request.
//!
//! Sources:
//! - capacity: the CreateFileSystem API, `StorageCapacity` (SCRATCH_2, PERSISTENT_1 and
//!   PERSISTENT_2 SSD: 1200, 2400, then increments of 2400 GiB; SCRATCH_1: 1200, 2400, then
//!   increments of 3600 GiB; PERSISTENT_1 HDD: increments of 6000 GiB at 12 MB/s/TiB, 1800 GiB
//!   at 40), https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystem.html;
//! - throughput: `CreateFileSystemLustreConfiguration.PerUnitStorageThroughput` (PERSISTENT_1
//!   SSD 50/100/200, HDD 12/40; PERSISTENT_2 125/250/500/1000; not used by SCRATCH),
//!   https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystemLustreConfiguration.html;
//! - rounding: kubernetes-sigs/aws-fsx-csi-driver v1.9.0 `pkg/util/util.go` `RoundUpVolumeSize`;
//!   with no capacity the driver asks for `DefaultVolumeSize` 1200 (`pkg/cloud/cloud.go`).

/// The driver's name, the StorageClass `provisioner` (aws-fsx-csi-driver `pkg/driver/driver.go`).
pub const PROVISIONER: &str = "fsx.csi.aws.com";

/// Bytes in a GiB: FSx counts capacity in GiB.
pub const GIB: i64 = 1 << 30;

/// StorageClass parameters that make the legacy file-system-level S3 link
/// (`LustreConfiguration` `ImportPath`/`ExportPath`/`AutoImportPolicy`, driver
/// `pkg/cloud/cloud.go`). FSx refuses it for PERSISTENT_2: "Linking a Persistent 2 file system
/// to an S3 bucket using the LustreConfiguration is not supported. Create a file system and
/// then create a data repository association" (aws-fsx-csi-driver issue #412, 2025).
pub const S3_PARAMS: [&str; 3] = ["s3ImportPath", "s3ExportPath", "autoImportPolicy"];

/// Every StorageClass parameter the driver reads: kubernetes-sigs/aws-fsx-csi-driver v1.9.0 (its
/// newest release; master has the same) `pkg/driver/controller.go` `volumeParams*`, documented
/// in `examples/kubernetes/dynamic_provisioning/README.md` (v1.9.0 has no `docs/parameters.md`).
/// Any other key is ignored without a word. `throughputCapacity`, `dataReadCacheSizingMode`,
/// `dataReadCacheSizeGiB` and `skipFinalBackup` (the INTELLIGENT_TIERING storage class) exist
/// only in an unmerged change ("Intelligent tiering", 046f3682): no released driver reads them.
pub const DRIVER_PARAMS: &[&str] = &[
    "subnetId",
    "securityGroupIds",
    "autoImportPolicy",
    "s3ImportPath",
    "s3ExportPath",
    "deploymentType",
    "kmsKeyId",
    "perUnitStorageThroughput",
    "storageType",
    "driveCacheType",
    "automaticBackupRetentionDays",
    "dailyAutomaticBackupStartTime",
    "copyTagsToBackups",
    "dataCompressionType",
    "weeklyMaintenanceStartTime",
    "fileSystemTypeVersion",
    "extraTags",
    "efaEnabled",
    "metadataConfigurationMode",
    "metadataIops",
];

/// The keys among `keys` the driver ignores (not its own; the external-provisioner reads
/// `csi.storage.k8s.io/*` itself).
pub fn ignored_params<'a>(keys: &[&'a str]) -> Vec<&'a str> {
    keys.iter()
        .copied()
        .filter(|k| !DRIVER_PARAMS.contains(k) && !k.starts_with("csi.storage.k8s.io/"))
        .collect()
}

/// Whether StorageClass parameters try to link S3: a legacy S3 key, or an ignored key naming S3,
/// a data repository or a `lustreConfiguration` (the quiz's `dataRepositoryAssociations`).
pub fn links_s3(keys: &[&str]) -> bool {
    let named = |k: &&str| {
        let k = k.to_ascii_lowercase();
        k.contains("s3") || k.contains("repositor") || k.contains("lustreconfiguration")
    };
    keys.iter().any(|k| S3_PARAMS.contains(k)) || ignored_params(keys).iter().any(named)
}

/// Whether `v` is an EC2 resource id of `prefix` (`subnet`, `sg`): the prefix, `-`, and 8 or 17
/// lowercase hex digits (EC2 user guide, "Resource IDs"). The driver passes `subnetId` as one
/// id and splits `securityGroupIds` on commas without trimming, so `"sg-a, sg-b"` holds an id
/// with a space.
pub fn is_ec2_id(v: &str, prefix: &str) -> bool {
    v.strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|h| {
            matches!(h.len(), 8 | 17) && h.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        })
}

/// Whether a ProvisioningFailed message is the provisioner giving up on one attempt while FSx
/// still creates the file system (it takes about 5–10 minutes; the driver polls up to 10,
/// `pkg/cloud/cloud.go` `PollCheckTimeout`): `DeadlineExceeded`, or "already in progress" from
/// the driver's in-flight guard (`pkg/driver/controller.go`). The provisioner retries these.
pub fn is_retried(message: &str) -> bool {
    [
        "DeadlineExceeded",
        "deadline exceeded",
        "already in progress",
    ]
    .iter()
    .any(|t| message.contains(t))
}

/// `LustreDeploymentType` values of the FSx API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeploymentType {
    Scratch1,
    Scratch2,
    Persistent1,
    Persistent2,
}

impl DeploymentType {
    pub const ALL: [DeploymentType; 4] = [
        DeploymentType::Scratch1,
        DeploymentType::Scratch2,
        DeploymentType::Persistent1,
        DeploymentType::Persistent2,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeploymentType::Scratch1 => "SCRATCH_1",
            DeploymentType::Scratch2 => "SCRATCH_2",
            DeploymentType::Persistent1 => "PERSISTENT_1",
            DeploymentType::Persistent2 => "PERSISTENT_2",
        }
    }

    /// The API value exactly (the enum is case-sensitive).
    pub fn parse(s: &str) -> Option<DeploymentType> {
        Self::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// What FSx creates when the StorageClass names no type: the driver sends none and the API
    /// defaults to SCRATCH_1 (CreateFileSystemLustreConfiguration `DeploymentType`; driver
    /// `examples/kubernetes/dynamic_provisioning/README.md`: "Default: SCRATCH_1").
    pub const DEFAULT: DeploymentType = DeploymentType::Scratch1;

    /// Per-unit storage throughput values (MB/s per TiB) FSx accepts; empty: not used.
    pub fn throughputs(self, hdd: bool) -> &'static [i64] {
        match (self, hdd) {
            (DeploymentType::Persistent1, false) => &[50, 100, 200],
            (DeploymentType::Persistent1, true) => &[12, 40],
            (DeploymentType::Persistent2, false) => &[125, 250, 500, 1000],
            _ => &[],
        }
    }
}

/// The storage of a file system: the StorageClass `storageType` (`SSD` unless `HDD`, the only
/// value the driver's rounding tells apart) and `perUnitStorageThroughput`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storage {
    pub hdd: bool,
    pub throughput: i64,
}

impl Storage {
    /// From the StorageClass values as written (`storageType`, `perUnitStorageThroughput`).
    pub fn of(storage_type: Option<&str>, throughput: Option<&str>) -> Storage {
        Storage {
            hdd: storage_type == Some("HDD"),
            throughput: throughput.and_then(|t| t.parse().ok()).unwrap_or(0),
        }
    }
}

/// What a StorageClass asks FSx for, as written: `deploymentType` ("" when unset) and storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked<'a> {
    pub deployment: &'a str,
    pub storage: Storage,
}

impl<'a> Asked<'a> {
    /// The deployment type FSx creates: as written, SCRATCH_1 when unset, None when unknown.
    pub fn deployment_type(&self) -> Option<DeploymentType> {
        match self.deployment {
            "" => Some(DeploymentType::DEFAULT),
            d => DeploymentType::parse(d),
        }
    }

    /// The type for messages: its API name, or the unknown value as written.
    pub fn deployment_text(&self) -> &'a str {
        self.deployment_type()
            .map_or(self.deployment, |d| d.as_str())
    }

    pub fn capacities(&self) -> Capacities {
        Capacities::of(self.deployment_type(), self.storage)
    }

    /// The capacity (GiB) the driver asks for, for a request of `bytes` ([`round_up_gib`]).
    pub fn round_up_gib(&self, bytes: i64) -> i64 {
        round_up_gib(bytes, self.deployment, self.storage)
    }
}

/// Which capacities a file system accepts: `first` sizes, then every multiple of `step`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacities {
    pub first: &'static [i64],
    pub step: i64,
}

impl Capacities {
    /// For a deployment type (None: unknown, judged by the rule of the other SSD types, as the
    /// driver's rounding does) and its storage.
    pub fn of(deployment: Option<DeploymentType>, storage: Storage) -> Capacities {
        if storage.hdd {
            let step = if storage.throughput == 12 { 6000 } else { 1800 };
            return Capacities { first: &[], step };
        }
        match deployment {
            Some(DeploymentType::Scratch1) => Capacities {
                first: &[1200, 2400],
                step: 3600,
            },
            _ => Capacities {
                first: &[1200],
                step: 2400,
            },
        }
    }

    pub fn accepts(&self, gib: i64) -> bool {
        gib > 0 && (self.first.contains(&gib) || gib % self.step == 0)
    }

    /// `1200Gi | 2400Gi | 2400Gi × n`, for expected values.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.first.iter().map(|g| format!("{g}Gi")).collect();
        if !self.first.contains(&self.step) {
            parts.push(format!("{}Gi", self.step));
        }
        parts.push(format!("{}Gi × n", self.step));
        parts.join(" | ")
    }
}

/// The capacity (GiB) the driver asks FSx for, given a claim's request in bytes: its
/// `RoundUpVolumeSize`. `deployment` is the StorageClass value as written ("" when unset): the
/// driver tells apart only `SCRATCH_1`/unset from every other value. `1.2Ti` (1228.8 GiB) becomes
/// 2400 GiB on PERSISTENT_2. Computed in i128, so no request overflows.
pub fn round_up_gib(bytes: i64, deployment: &str, storage: Storage) -> i64 {
    let up = |unit: i128| -> i64 {
        let b = i128::from(bytes.max(0));
        let g = i128::from(GIB);
        let n = (b + unit * g - 1) / (unit * g);
        i64::try_from(n * unit).unwrap_or(i64::MAX)
    };
    if storage.hdd {
        return up(if storage.throughput == 12 { 6000 } else { 1800 });
    }
    let scratch1 = deployment.is_empty() || deployment == DeploymentType::Scratch1.as_str();
    let (small, below) = if scratch1 { (1200, 3600) } else { (1200, 2400) };
    if i128::from(bytes) < below * i128::from(GIB) {
        up(small)
    } else {
        up(below)
    }
}

/// A byte count in GiB for messages, to the nearest tenth: `2400`, `1228.8` (`1.2Ti`); a count
/// that is not whole GiB keeps its decimal (`1200.0`), so it never looks like a valid size.
pub fn gib_text(bytes: i64) -> String {
    let g = i128::from(GIB);
    let tenths = (i128::from(bytes) * 10 + g / 2) / g;
    if i128::from(bytes) % g == 0 {
        format!("{}", tenths / 10)
    } else {
        format!("{}.{}", tenths / 10, tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SSD: Storage = Storage {
        hdd: false,
        throughput: 250,
    };

    fn gib(n: i64) -> i64 {
        n * GIB
    }

    #[test]
    fn persistent_2_ssd_takes_1200_2400_and_multiples_of_2400() {
        let c = Capacities::of(Some(DeploymentType::Persistent2), SSD);
        for ok in [1200, 2400, 4800, 7200, 24000] {
            assert!(c.accepts(ok), "{ok}");
        }
        for bad in [0, 600, 1000, 1228, 3600, 6000] {
            assert!(!c.accepts(bad), "{bad}");
        }
        assert_eq!(c.describe(), "1200Gi | 2400Gi | 2400Gi × n");
    }

    #[test]
    fn scratch_1_steps_by_3600_after_2400_and_hdd_by_its_throughput() {
        let c = Capacities::of(Some(DeploymentType::Scratch1), SSD);
        assert!(c.accepts(2400) && c.accepts(3600) && c.accepts(7200));
        assert!(!c.accepts(4800));
        assert_eq!(c.describe(), "1200Gi | 2400Gi | 3600Gi | 3600Gi × n");
        let hdd12 = Capacities::of(
            Some(DeploymentType::Persistent1),
            Storage {
                hdd: true,
                throughput: 12,
            },
        );
        assert!(hdd12.accepts(6000) && !hdd12.accepts(1800) && !hdd12.accepts(1200));
        let hdd40 = Capacities::of(
            Some(DeploymentType::Persistent1),
            Storage {
                hdd: true,
                throughput: 40,
            },
        );
        assert!(hdd40.accepts(1800) && hdd40.accepts(3600) && !hdd40.accepts(1200));
    }

    /// The examples of the driver's `util_test.go` and of facts §18.
    #[test]
    fn the_driver_rounds_requests_up_per_deployment_type() {
        assert_eq!(round_up_gib(gib(1024), "PERSISTENT_2", SSD), 1200);
        // 1.2Ti = 1228.8 GiB: just over 1200, so 2400.
        assert_eq!(round_up_gib(gib(12) * 1024 / 10, "PERSISTENT_2", SSD), 2400);
        assert_eq!(round_up_gib(gib(2400), "PERSISTENT_2", SSD), 2400);
        assert_eq!(round_up_gib(gib(3000), "SCRATCH_2", SSD), 4800);
        assert_eq!(round_up_gib(gib(3000), "SCRATCH_1", SSD), 3600);
        assert_eq!(round_up_gib(gib(3000), "", SSD), 3600);
        assert_eq!(round_up_gib(gib(2000), "", SSD), 2400);
        assert_eq!(round_up_gib(gib(5000), "SCRATCH_1", SSD), 7200);
        let hdd = |t| Storage {
            hdd: true,
            throughput: t,
        };
        assert_eq!(round_up_gib(gib(100), "PERSISTENT_1", hdd(12)), 6000);
        assert_eq!(round_up_gib(gib(2000), "PERSISTENT_1", hdd(40)), 3600);
        // A request near the largest quantity does not overflow.
        assert!(round_up_gib(i64::MAX, "PERSISTENT_2", SSD) > 0);
    }

    #[test]
    fn an_unset_type_is_scratch_1_and_an_unknown_one_rounds_like_persistent() {
        let unset = Asked {
            deployment: "",
            storage: SSD,
        };
        assert_eq!(unset.deployment_text(), "SCRATCH_1");
        assert!(unset.capacities().accepts(3600));
        assert_eq!(unset.round_up_gib(gib(3000)), 3600);
        let odd = Asked {
            deployment: "PERSISTENT2",
            storage: SSD,
        };
        assert_eq!(odd.deployment_type(), None);
        assert_eq!(odd.deployment_text(), "PERSISTENT2");
        assert!(odd.capacities().accepts(4800));
        assert_eq!(odd.round_up_gib(gib(3000)), 4800);
    }

    #[test]
    fn throughputs_and_deployment_types_follow_the_api() {
        assert_eq!(
            DeploymentType::Persistent2.throughputs(false),
            &[125, 250, 500, 1000]
        );
        assert!(DeploymentType::Scratch2.throughputs(false).is_empty());
        assert_eq!(DeploymentType::Persistent1.throughputs(true), &[12, 40]);
        assert_eq!(
            DeploymentType::parse("PERSISTENT_2"),
            Some(DeploymentType::Persistent2)
        );
        assert_eq!(DeploymentType::parse("persistent_2"), None);
    }

    /// Parameters of an unmerged change are ignored by every released driver.
    #[test]
    fn unreleased_intelligent_tiering_parameters_are_ignored() {
        let keys = [
            "deploymentType",
            "throughputCapacity",
            "dataReadCacheSizingMode",
            "dataReadCacheSizeGiB",
            "skipFinalBackup",
        ];
        assert_eq!(ignored_params(&keys), &keys[1..]);
        assert_eq!(DRIVER_PARAMS.len(), 20);
    }

    #[test]
    fn ignored_keys_and_s3_links() {
        let keys = [
            "subnetId",
            "dataRepositoryAssociations",
            "csi.storage.k8s.io/fstype",
            "x",
        ];
        assert_eq!(ignored_params(&keys), ["dataRepositoryAssociations", "x"]);
        assert!(links_s3(&keys));
        assert!(links_s3(&["s3ImportPath"]));
        assert!(!links_s3(&["subnetId", "x", "deploymentType"]));
    }

    #[test]
    fn ec2_ids_and_retried_failures() {
        assert!(is_ec2_id("subnet-0123456789abcdef0", "subnet"));
        assert!(is_ec2_id("sg-0123abcd", "sg"));
        assert!(!is_ec2_id("subnet-REPLACE_ME", "subnet"));
        assert!(!is_ec2_id(" sg-0123abcd", "sg"));
        assert!(!is_ec2_id("sg-0123abcd", "subnet"));
        assert!(!is_ec2_id("subnet-0123456789ABCDEF0", "subnet"));
        assert!(is_retried(
            "failed to provision volume with StorageClass \"fsx-lustre\": rpc error: code = DeadlineExceeded desc = context deadline exceeded"
        ));
        assert!(!is_retried("CreateFileSystem failed: InvalidPerUnitStorageThroughput: The storage throughput (MB/s/TiB) value should be one of [50,100,200]."));
        assert_eq!(
            Storage::of(Some("HDD"), Some("12")),
            Storage {
                hdd: true,
                throughput: 12
            }
        );
        assert_eq!(Storage::of(None, Some("x")).throughput, 0);
    }

    #[test]
    fn gib_text_keeps_one_decimal() {
        assert_eq!(gib_text(gib(2400)), "2400");
        assert_eq!(gib_text(gib(12) * 1024 / 10), "1228.8");
        // `1.2Ti` in bytes, rounded up as Quantity::bytes does.
        assert_eq!(gib_text(1_319_413_953_332), "1228.8");
        assert_eq!(gib_text(1_000_000_000_000), "931.3");
        assert_eq!(gib_text(gib(1200) + 1), "1200.0");
    }
}

//! Lab `slurm-accounting` (quiz question 3): slurmdbd keeps the accounting records, slurmctld
//! the cluster state. The learner writes a Slinky `Accounting` `slurm-accounting` (slurmdbd)
//! whose `storageConfig` points at the MariaDB the starter ships, and the `Controller` `slurm`
//! (slurmctld) that reports to it through `accountingRef`.
//!
//! Spec checks judge the two objects as written (also with `--files`): the kind and version
//! the v1.x CRDs serve and what they refuse (kit `slinky`), the database host as a Service of
//! the namespace (`services`), the password as a reference to a Secret — looked up in a
//! metadata-only list, never its data — and the Controller's reference. State checks follow each
//! object's uid to the StatefulSet the operator builds for it and judge its pods (kit
//! `rollout`), never names or labels.
//!
//! Upstream (SlinkyProject/slurm-operator v1.2.1, views in views/slinky.rs):
//! - `StorageConfig{host (required), port (default 3306), database (default slurm_acct_db),
//!   username, passwordKeyRef (required)}` (`api/v1beta1/accounting_types.go`); the chart's
//!   defaults are host `mariadb`, user `slurm`, Secret `mariadb-password` key `password`
//!   (`helm/slurm/values.yaml`, `docs/installation.md`);
//! - `ControllerSpec.accountingRef` links slurmctld to slurmdbd (`controller_types.go`);
//! - the Accounting and the Controller each get a StatefulSet whose controller reference is the
//!   CR (`internal/builder/{accountingbuilder,controllerbuilder}`: `SetControllerReference`);
//! - `persistence.enabled` defaults to true: slurmctld's StateSaveLocation on a volume
//!   (`ControllerPersistence`, `docs/installation.md` "Controller Persistence");
//! - the JWT key is `jwtKeyRef`; `jwtHs256KeyRef` is deprecated since 1.1.0 (advice).

mod services;

use crate::observe::kinds::{
    PODS, SECRETS, SERVICES, SLURM_ACCOUNTINGS, SLURM_CONTROLLERS, STATEFULSETS,
};
use crate::observe::{InputError, Obj, Unavailable};
use crate::verify::kit::k8s::rollout;
use crate::verify::kit::training::slinky;
use crate::verify::views::slinky::{Accounting, Controller};
use crate::verify::{Advice, JudgeCtx, Judgement, Named, Outcome, Params, Read, Verifier};
use services::service_of_host;

pub struct SlurmAccounting;

static ACCOUNTINGS_READ: Read = Read::lab(&SLURM_ACCOUNTINGS);
static CONTROLLERS_READ: Read = Read::lab(&SLURM_CONTROLLERS);
static SERVICES_READ: Read = Read::lab(&SERVICES);
// Listed as metadata only by every live source (src/cluster/gather.rs): never Secret data.
static SECRETS_READ: Read = Read::lab(&SECRETS);
static SETS_READ: Read = Read::lab(&STATEFULSETS);
static PODS_READ: Read = Read::lab(&PODS);
static READS: &[&Read] = &[
    &ACCOUNTINGS_READ,
    &CONTROLLERS_READ,
    &SERVICES_READ,
    &SECRETS_READ,
    &SETS_READ,
    &PODS_READ,
];

const ACCOUNTING: &str = "slurm-accounting";
const KIND: &str = "accounting-kind";
const STORAGE: &str = "storage-config";
const PASSWORD: &str = "password-from-secret";
const CONTROLLER_REF: &str = "controller-references-accounting";
const SLURMDBD: &str = "slurmdbd-ready";
const SLURMCTLD: &str = "slurmctld-ready";
const CHECKS: &[&str] = &[KIND, STORAGE, PASSWORD, CONTROLLER_REF, SLURMDBD, SLURMCTLD];

impl Verifier for SlurmAccounting {
    fn lab_id(&self) -> &'static str {
        "slurm-accounting"
    }

    fn check_ids(&self) -> &'static [&'static str] {
        CHECKS
    }

    fn reads(&self) -> &'static [&'static Read] {
        READS
    }

    fn judge(&self, ctx: &JudgeCtx) -> Result<Judgement, InputError> {
        let obj = match ctx.named(&ACCOUNTINGS_READ, ACCOUNTING, CHECKS) {
            Named::Found(o) => o,
            Named::Absent(j) => {
                return Ok(slinky::with_unserved(
                    ctx,
                    j,
                    KIND,
                    "Accounting",
                    ACCOUNTING,
                ))
            }
        };
        let acct = Accounting::from_obj(obj)?;
        let db = Db::of(ctx)?;
        let mut j = Judgement::default();
        j.push(kind(obj));
        let mut advice = Vec::new();
        j.push(storage_config(ctx, &acct, &db, &mut advice));
        advice.into_iter().for_each(|a| j.advise(a));
        j.push(password_from_secret(ctx, obj, &acct, &db));
        let ctl_name = ctx.params.require("controller")?;
        let controller = match ctx.list(&CONTROLLERS_READ) {
            Ok(all) => Ok(all.into_iter().find(|o| o.name() == ctl_name)),
            Err(why) => Err(why),
        };
        let o = controller_ref(ctl_name, &controller)?;
        j.push(
            o.with("controller", ctl_name)
                .with("accounting", ACCOUNTING),
        );
        if let Ok(Some(c)) = &controller {
            if !Controller::from_obj(c)?.persistence_enabled() {
                j.advise(Advice::new("no-persistence").with("controller", ctl_name));
            }
        }
        let mine = [Some(obj), controller.as_ref().ok().copied().flatten()];
        if let Some(a) = deprecated_jwt(mine.into_iter().flatten()) {
            j.advise(a);
        }
        // Static mode: the framework skips the state checks (NeedsLiveCluster).
        if ctx.is_static() {
            return Ok(j);
        }
        let (sets, pods) = match (ctx.list(&SETS_READ), ctx.list(&PODS_READ)) {
            (Ok(s), Ok(p)) => (s, p),
            (Err(why), _) | (_, Err(why)) => {
                j.push(Outcome::unavailable(SLURMDBD, &why));
                j.push(Outcome::unavailable(SLURMCTLD, &why));
                return Ok(j);
            }
        };
        let what = format!("Accounting {ACCOUNTING}");
        let r = rollout::statefulset_of(obj, &sets, &pods)?;
        let missing = slinky::missing_images(obj, &["spec.slurmdbd"])?;
        j.push(rollout::outcome(SLURMDBD, &what, r.as_ref(), &missing));
        j.push(match controller {
            Ok(Some(c)) => {
                let r = rollout::statefulset_of(c, &sets, &pods)?;
                let missing = slinky::missing_images(c, &["spec.slurmctld", "spec.logfile"])?;
                rollout::outcome(
                    SLURMCTLD,
                    &format!("Controller {ctl_name}"),
                    r.as_ref(),
                    &missing,
                )
            }
            Ok(None) => Outcome::fail(
                SLURMCTLD,
                format!("Controller {ctl_name}"),
                format!("Controller {ctl_name}: —"),
            )
            .hint("no-controller")
            .with("controller", ctl_name),
            Err(why) => Outcome::unavailable(SLURMCTLD, &why),
        });
        Ok(j)
    }
}

/// The database the starter ships (lab parameters), which the Accounting should use.
struct Db<'a> {
    service: &'a str,
    port: i64,
    database: &'a str,
    user: &'a str,
    secret: &'a str,
    key: &'a str,
}

impl<'a> Db<'a> {
    fn of(ctx: &JudgeCtx<'a>) -> Result<Db<'a>, InputError> {
        let p = |name: &str| ctx.params.require(name);
        let port = Params::number(Some(p("db_port")?), "db_port")?.unwrap_or_default();
        Ok(Db {
            service: p("db_service")?,
            port: i64::from(port),
            database: p("database")?,
            user: p("db_user")?,
            secret: p("password_secret")?,
            key: p("password_key")?,
        })
    }
}

/// `jwt-hs256-deprecated`: the objects naming their JWT key with `jwtHs256KeyRef`, which the
/// CRD still accepts but slurm-operator deprecated in 1.1.0 for `jwtKeyRef` (kit `slinky`).
fn deprecated_jwt<'a>(objs: impl Iterator<Item = &'a Obj>) -> Option<Advice> {
    let named: Vec<String> = objs
        .filter(|o| slinky::deprecated_jwt_ref(o))
        .map(|o| format!("{} {}", o.kind(), o.name()))
        .collect();
    (!named.is_empty())
        .then(|| Advice::new("jwt-hs256-deprecated").with("objects", named.join(", ")))
}

fn kind(obj: &Obj) -> Outcome {
    if let Some(o) = slinky::wrong_version(KIND, obj) {
        return o;
    }
    if let Some(r) = slinky::key_ref_refusals(obj).first() {
        return slinky::refusal_outcome(KIND, obj, r);
    }
    let v = format!("apiVersion: {}, kind: Accounting", obj.api_version());
    Outcome::pass(KIND).expected_found(&v, &v)
}

/// The Services of the namespace as `(name, ports)`. In static mode the learner's files rarely
/// hold the starter's Service, which `trainlab start` created: it counts as present.
fn services_of(ctx: &JudgeCtx, db: &Db) -> Result<Vec<(String, Vec<i64>)>, Unavailable> {
    let mut out: Vec<(String, Vec<i64>)> = ctx
        .list(&SERVICES_READ)?
        .into_iter()
        .map(|s| (s.name().to_string(), services::ports(s)))
        .collect();
    if ctx.is_static() && !out.iter().any(|(n, _)| n == db.service) {
        out.push((db.service.to_string(), vec![db.port]));
    }
    Ok(out)
}

fn storage_config(ctx: &JudgeCtx, acct: &Accounting, db: &Db, advice: &mut Vec<Advice>) -> Outcome {
    let ns = ctx.target.namespace.as_str();
    let s = acct.storage();
    let host = s.and_then(|s| s.host.as_deref()).unwrap_or_default();
    let (port, database) = (acct.db_port(), acct.db_name());
    let user = s.and_then(|s| s.username.as_deref()).unwrap_or_default();
    let expected = format!(
        "spec.storageConfig: {{host: {}, port: {}, database: {}, username: {}}}",
        db.service, db.port, db.database, db.user
    );
    let found = format!(
        "spec.storageConfig: {{host: {}, port: {port}, database: {database}, username: {}}}",
        or_dash(host),
        or_dash(user)
    );
    let ev = |o: Outcome| {
        o.with("host", or_dash(host))
            .with("port", port)
            .with("database", database)
            .with("username", or_dash(user))
            .with("namespace", ns)
            .with("db_service", db.service)
            .with("db_port", db.port)
            .with("expected_database", db.database)
            .with("expected_user", db.user)
    };
    let fail = |hint: Option<&str>| {
        let o = Outcome::fail(STORAGE, &expected, &found);
        ev(match hint {
            Some(h) => o.hint(h),
            None => o,
        })
    };
    if host.trim().is_empty() {
        return fail(Some("no-host"));
    }
    let services = match services_of(ctx, db) {
        Ok(s) => s,
        Err(why) => return Outcome::unavailable(STORAGE, &why),
    };
    let names: Vec<&str> = services.iter().map(|(n, _)| n.as_str()).collect();
    let target = service_of_host(host);
    let Some(svc) = target.filter(|t| t.namespace_for(ns) == ns) else {
        let hint = service_of_host(host).map(|_| "other-namespace");
        return fail(hint).with("services", or_dash(&names.join(", ")));
    };
    let Some((name, ports)) = services.iter().find(|(n, _)| *n == svc.name) else {
        return fail(None).with("services", or_dash(&names.join(", ")));
    };
    if !ports.contains(&port) {
        let ports: Vec<String> = ports.iter().map(i64::to_string).collect();
        return fail(Some("port"))
            .with("service", name)
            .with("service_ports", or_dash(&ports.join(", ")));
    }
    // The starter's MariaDB holds one database and one user; another Service of the namespace
    // is the learner's own database, whose names only they know.
    if name == db.service {
        if database != db.database {
            return fail(Some("database"));
        }
        if user != db.user {
            return fail(Some("username"));
        }
    } else if user.is_empty() {
        return fail(Some("username"));
    }
    if s.is_some_and(|s| s.port.is_none() || s.database.is_none()) {
        advice.push(
            Advice::new("storage-defaulted")
                .with("port", port)
                .with("database", database),
        );
    }
    ev(Outcome::pass(STORAGE).expected_found(&found, &found)).with("service", name)
}

fn or_dash(s: &str) -> &str {
    if s.trim().is_empty() {
        "—"
    } else {
        s
    }
}

/// `StoragePass` in `extraConf` (appended to slurmdbd.conf) would put the password in the CR.
fn inline_password(extra_conf: Option<&str>) -> bool {
    extra_conf.is_some_and(|c| {
        c.lines().any(|l| {
            l.trim_start()
                .to_ascii_lowercase()
                .starts_with("storagepass")
        })
    })
}

fn password_from_secret(ctx: &JudgeCtx, obj: &Obj, acct: &Accounting, db: &Db) -> Outcome {
    let r = acct.storage().and_then(|s| s.password_key_ref.as_ref());
    let name = r.and_then(|r| r.name.as_deref()).unwrap_or_default();
    let key = r.and_then(|r| r.key.as_deref()).unwrap_or_default();
    let expected = format!(
        "spec.storageConfig.passwordKeyRef: {{name: {}, key: {}}}",
        db.secret, db.key
    );
    let found = match r {
        None => "spec.storageConfig.passwordKeyRef: —".to_string(),
        Some(_) => format!(
            "spec.storageConfig.passwordKeyRef: {{name: {}, key: {}}}",
            or_dash(name),
            or_dash(key)
        ),
    };
    let ev = |o: Outcome| {
        o.with("secret", or_dash(name))
            .with("key", or_dash(key))
            .with("expected_secret", db.secret)
            .with("expected_key", db.key)
    };
    let fail = |hint: &str| ev(Outcome::fail(PASSWORD, &expected, &found).hint(hint));
    if inline_password(obj.value["spec"]["extraConf"].as_str()) {
        return ev(
            Outcome::fail(PASSWORD, &expected, "spec.extraConf: StoragePass=…").hint("inline"),
        );
    }
    if name.trim().is_empty() {
        return fail("no-ref");
    }
    if key.trim().is_empty() {
        return fail("no-key");
    }
    let mut secrets: Vec<String> = match ctx.list(&SECRETS_READ) {
        Ok(s) => s.iter().map(|o| o.name().to_string()).collect(),
        Err(why) => return Outcome::unavailable(PASSWORD, &why),
    };
    // `trainlab start` created the starter's Secret; the learner's files need not hold it.
    if ctx.is_static() {
        secrets.push(db.secret.to_string());
    }
    if !secrets.iter().any(|s| s == name) {
        return fail("no-secret");
    }
    // Only the starter's Secret's keys are known (Secret data is never read).
    if name == db.secret && key != db.key {
        return fail("key");
    }
    ev(Outcome::pass(PASSWORD).expected_found(&found, &found))
}

fn controller_ref(
    name: &str,
    found: &Result<Option<&Obj>, Unavailable>,
) -> Result<Outcome, InputError> {
    let expected = format!("Controller {name}: spec.accountingRef.name: {ACCOUNTING}");
    let c = match found {
        Err(why) => return Ok(Outcome::unavailable(CONTROLLER_REF, why)),
        Ok(None) => {
            return Ok(
                Outcome::fail(CONTROLLER_REF, expected, format!("Controller {name}: —"))
                    .hint("no-controller"),
            )
        }
        Ok(Some(c)) => *c,
    };
    if let Some(o) = slinky::wrong_version(CONTROLLER_REF, c) {
        return Ok(o);
    }
    if let Some(r) = slinky::key_ref_refusals(c).first() {
        return Ok(slinky::refusal_outcome(CONTROLLER_REF, c, r));
    }
    let reference = Controller::from_obj(c)?
        .accounting_name()
        .unwrap_or_default()
        .to_string();
    let found = format!(
        "Controller {name}: spec.accountingRef.name: {}",
        or_dash(&reference)
    );
    let o = if reference == ACCOUNTING {
        Outcome::pass(CONTROLLER_REF).expected_found(expected, found)
    } else if reference.is_empty() {
        Outcome::fail(CONTROLLER_REF, expected, found)
    } else {
        Outcome::fail(CONTROLLER_REF, expected, found).hint("other")
    };
    Ok(o.with("reference", or_dash(&reference)))
}

//! `start` and `solve` on a live cluster: the profile they apply, connecting, and one printed line
//! per object applied (the applying itself is `ops::manifests`).

use super::live::{connect_and_announce, LiveArgs};
use super::print;
use crate::catalog::LabBundle;
use crate::facts::Profile;
use crate::ops::capacity::Capacity;
use crate::ops::manifests::{self, Applied, Placement};

/// The profile whose starter and solution `start`/`solve` apply: the flag, else the one the kube
/// context's name suggests (read from the kubeconfig file, no request), else kind.
pub fn profile_for(flag: Option<Profile>, live: &LiveArgs) -> Profile {
    flag.or_else(|| {
        super::show::context_profile(live.kubeconfig.as_deref(), live.context.as_deref())
    })
    .unwrap_or(Profile::Kind)
}

/// The accelerated capacity `folders` ask for on the EKS profile (none on kind: its
/// accelerators are faked and cost nothing).
pub fn capacity(
    b: &LabBundle,
    folders: &[&str],
    profile: Profile,
    site: &crate::profile::site::SiteValues,
) -> Result<Capacity, crate::Error> {
    if profile != Profile::Eks {
        return Ok(Capacity::default());
    }
    let mut objs = Vec::new();
    for folder in folders {
        objs.extend(manifests::objects(b, folder, profile, site)?);
    }
    Ok(Capacity::of(&objs))
}

/// Applies `folders` as one set and prints what happened to each object.
pub fn apply_folders(
    b: &LabBundle,
    folders: &[&str],
    profile: Profile,
    place: &Placement,
    opts: &crate::cluster::ConnectOpts,
    force: bool,
    lang: crate::text::Lang,
) -> Result<Applied, crate::Error> {
    let stopped = crate::text::Text {
        ja: "適用の途中で止めました。適用済みのものはそのまま残ります。同じコマンドをもう一度実行すると最後まで適用します（何度適用しても同じ結果です）".into(),
        en: "stopped while applying; what was applied stays. Run the same command again to finish (applying twice gives the same result)".into(),
    };
    super::live::runtime_stopped_by_signal(lang, stopped)?.block_on(async {
        let conn = connect_and_announce(opts).await?;
        crate::cluster::probe(&conn).await?;
        let applied = manifests::apply_folders(&conn, b, folders, profile, place, force).await?;
        if let Applied::Done(changes) = &applied {
            for (what, word) in changes {
                print(&format!("{what} {word}\n"));
            }
        }
        Ok(applied)
    })
}

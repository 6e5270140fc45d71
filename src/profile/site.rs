//! A cluster's site facts: what `trainlab setup eks` discovered about one EKS cluster (region,
//! account, the zone with GPU capacity, a subnet in that zone, the cluster security group, the
//! node role and the node classes it prepared), kept in one file per kube context so that `start`,
//! `solve`, `check` and `grade` fill the EKS answers with real values instead of placeholders.
//!
//! Lab files name a site fact as `${site.KEY}` (for example `subnetId: ${site.subnet_id}`;
//! the keys and the filling are `facts::site`). Every key is also a `--param` of the same name,
//! which wins over the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::facts::Profile;
use crate::Error;

pub use crate::facts::site::KEYS;

/// The facts of one cluster as `setup eks` writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// The kube context this file belongs to.
    pub context: String,
    /// The trainlab version that wrote it.
    #[serde(default)]
    pub written_by: String,
    /// Whether the cluster runs EKS Auto Mode (its NodeClass is `eks.amazonaws.com/v1`).
    #[serde(default)]
    pub auto_mode: bool,
    /// Every fact found, by key ([`KEYS`]).
    #[serde(default)]
    pub values: BTreeMap<String, String>,
}

/// The facts the kind profile stands for ([`crate::facts::site::KIND_VALUES`]).
pub fn kind_values() -> BTreeMap<String, String> {
    crate::facts::site::KIND_VALUES
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Where site files live: `$TRAINLAB_SITE_DIR`, else `$XDG_CONFIG_HOME/trainlab/sites`, else
/// `~/.config/trainlab/sites`.
pub fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TRAINLAB_SITE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("trainlab").join("sites"))
}

/// The file name of a context's site: its name with every character a file name should not
/// carry (`/` and `:` of EKS ARNs among them) as `_`.
pub fn file_name(context: &str) -> String {
    let safe: String = context
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.yaml")
}

/// The site file of a context, when a config folder is known.
pub fn path_for(context: &str) -> Option<PathBuf> {
    dir().map(|d| d.join(file_name(context)))
}

impl Site {
    /// Reads the site file of `context`; None when there is none. A file that exists but cannot
    /// be read or parsed is an error naming it (a stale or hand-edited file must not be guessed
    /// around).
    pub fn load(context: &str) -> Result<Option<Site>, Error> {
        let Some(path) = path_for(context) else {
            return Ok(None);
        };
        Site::load_from(&path)
    }

    /// Reads one site file; None when it does not exist.
    pub fn load_from(path: &Path) -> Result<Option<Site>, Error> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                let p = path.display();
                return Err(Error::usage(
                    format!("{p}: サイトファイルを読み込めません: {e}"),
                    format!("{p}: cannot read the site file: {e}"),
                ));
            }
        };
        let site: Site = serde_saphyr::from_str(&text).map_err(|e| {
            let p = path.display();
            Error::usage(
                format!("{p}: サイトファイルが壊れています: {e}（`trainlab setup eks` を再実行すると書き直します）"),
                format!("{p}: the site file is broken: {e} (re-run `trainlab setup eks` to rewrite it)"),
            )
        })?;
        for key in site.values.keys() {
            if !crate::facts::site::is_key(key) {
                let p = path.display();
                return Err(Error::usage(
                    format!(
                        "{p}: 不明なキー `{key}`（使えるキー: {}）",
                        crate::facts::site::key_list()
                    ),
                    format!(
                        "{p}: unknown key `{key}` (known keys: {})",
                        crate::facts::site::key_list()
                    ),
                ));
            }
        }
        Ok(Some(site))
    }

    /// Writes the file for its context, replacing an older one whole (written to a temporary
    /// file beside it, then renamed, so a reader never sees half a file).
    pub fn save(&self) -> Result<PathBuf, Error> {
        let path = path_for(&self.context).ok_or_else(|| {
            Error::usage(
                "サイトファイルの置き場所がわかりません。HOME か TRAINLAB_SITE_DIR を設定してください",
                "no folder for the site file: set HOME or TRAINLAB_SITE_DIR",
            )
        })?;
        self.save_to(&path)?;
        Ok(path)
    }

    /// Writes the site to `path` atomically.
    pub fn save_to(&self, path: &Path) -> Result<(), Error> {
        let io = |e: std::io::Error| {
            let p = path.display();
            Error::usage(
                format!("{p}: サイトファイルを書き込めません: {e}"),
                format!("{p}: cannot write the site file: {e}"),
            )
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let mut text = String::from(
            "# Written by `trainlab setup eks`: what it found about this cluster. `start`, `solve`,\n\
             # `check` and `grade` fill the EKS answers from it; a `--param KEY=VALUE` wins.\n",
        );
        text.push_str(&serde_saphyr::to_string(self).map_err(|e| {
            Error::usage(
                format!("サイトを YAML にできません: {e}"),
                format!("cannot write the site as YAML: {e}"),
            )
        })?);
        let tmp = path.with_extension("yaml.tmp");
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

/// The site facts one command uses: `--param` over the site file over the profile's own
/// (kind's fixed values; EKS has none of its own).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteValues {
    values: BTreeMap<String, String>,
    /// Where the values came from, for the refusal when one is missing.
    file: Option<PathBuf>,
    profile: Option<Profile>,
}

impl SiteValues {
    /// Resolves the values for `profile`: kind's fixed ones, or the site file of `context` for
    /// EKS; then every `--param` whose name is a site key.
    pub fn resolve(
        profile: Profile,
        context: Option<&str>,
        params: &[(String, String)],
    ) -> Result<SiteValues, Error> {
        let (mut values, file) = match profile {
            Profile::Kind => (kind_values(), None),
            Profile::Eks => match context {
                Some(ctx) => {
                    let file = path_for(ctx);
                    let site = Site::load(ctx)?;
                    (site.map(|s| s.values).unwrap_or_default(), file)
                }
                None => (BTreeMap::new(), None),
            },
        };
        for (k, v) in params {
            if crate::facts::site::is_key(k) {
                values.insert(k.clone(), v.clone());
            }
        }
        Ok(SiteValues {
            values,
            file,
            profile: Some(profile),
        })
    }

    /// Fixed values (tests, and callers that already hold them).
    pub fn from_map(values: BTreeMap<String, String>) -> SiteValues {
        SiteValues {
            values,
            file: None,
            profile: None,
        }
    }

    /// The kind profile's values.
    pub fn kind() -> SiteValues {
        SiteValues::from_map(kind_values())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Every value, by key.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// `text` with every `${site.KEY}` replaced by its value. An unknown key, an unclosed token
    /// or a value this site does not have is an error naming `origin`, the key, and the
    /// `--param` (or `setup eks`) that gives it: no placeholder ever reaches a cluster.
    pub fn render(&self, text: &str, origin: &str) -> Result<String, Error> {
        use crate::facts::site::{fill, TokenError};
        fill(text, &|key| self.values.get(key).cloned()).map_err(|e| match e {
            TokenError::Missing(key) => self.missing(&key, origin),
            other => {
                let (en, ja) = other.said(origin);
                Error::usage(ja, en)
            }
        })
    }

    /// The refusal for a value this site lacks.
    fn missing(&self, key: &str, origin: &str) -> Error {
        let what = KEYS.iter().find(|(k, _)| *k == key).map_or("", |(_, w)| *w);
        let file = match &self.file {
            Some(f) => format!(" ({} has none)", f.display()),
            None => String::new(),
        };
        let file_ja = match &self.file {
            Some(f) => format!("（{} にありません）", f.display()),
            None => String::new(),
        };
        let setup = if self.profile == Some(Profile::Eks) {
            " or run `trainlab setup eks --cluster NAME`, which finds it and writes it down"
        } else {
            ""
        };
        let setup_ja = if self.profile == Some(Profile::Eks) {
            "、または `trainlab setup eks --cluster NAME` を実行してください（値を見つけて記録します）"
        } else {
            "してください"
        };
        Error::usage(
            format!("{origin} には `{key}`（{what}）が必要ですが、わかりません{file_ja}。`--param {key}=…` で指定{setup_ja}"),
            format!("{origin} needs `{key}` ({what}), which is not known{file}: give it with `--param {key}=…`{setup}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eks(values: &[(&str, &str)]) -> SiteValues {
        let mut s = SiteValues::from_map(
            values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        s.profile = Some(Profile::Eks);
        s
    }

    #[test]
    fn a_token_is_replaced_by_the_sites_value() {
        let s = eks(&[("subnet_id", "subnet-0abc"), ("zone", "us-east-1b")]);
        let text = "subnetId: ${site.subnet_id}\nvalues: [\"${site.zone}\"]\n";
        assert_eq!(
            s.render(text, "f.yaml").unwrap(),
            "subnetId: subnet-0abc\nvalues: [\"us-east-1b\"]\n"
        );
    }

    #[test]
    fn shell_variables_and_kubernetes_expansions_are_left_alone() {
        let s = eks(&[]);
        let text = "command: [sh, -c, 'echo ${RANK} $(POD_NAME) ${HOME}']\n";
        assert_eq!(s.render(text, "f.yaml").unwrap(), text);
    }

    #[test]
    fn a_missing_value_is_refused_naming_the_param_and_setup() {
        let s = eks(&[]);
        let e = s
            .render("subnetId: ${site.subnet_id}", "labs/08/solution/x.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--param subnet_id="), "{e}");
        assert!(e.contains("trainlab setup eks"), "{e}");
        assert!(e.contains("labs/08/solution/x.yaml"), "{e}");
    }

    #[test]
    fn an_unknown_key_and_an_unclosed_token_are_refused() {
        let s = SiteValues::kind();
        let e = s.render("x: ${site.vpc}", "f").unwrap_err().to_string();
        assert!(e.contains("unknown site value `${site.vpc}`"), "{e}");
        let e = s.render("x: ${site.zone", "f").unwrap_err().to_string();
        assert!(e.contains("not closed"), "{e}");
    }

    #[test]
    fn a_param_wins_over_the_profiles_value() {
        let params = vec![("zone".to_string(), "us-west-2c".to_string())];
        let s = SiteValues::resolve(Profile::Kind, None, &params).unwrap();
        assert_eq!(s.get("zone"), Some("us-west-2c"));
        assert_eq!(s.get("subnet_id"), Some("subnet-0123456789abcdef0"));
    }

    #[test]
    fn a_site_file_round_trips_and_an_arn_context_is_a_safe_file_name() {
        let dir = std::env::temp_dir().join(format!("trainlab-site-{}", std::process::id()));
        let ctx = "arn:aws:eks:us-west-2:123456789012:cluster/train";
        let name = file_name(ctx);
        assert!(!name.contains('/') && !name.contains(':'), "{name}");
        let site = Site {
            context: ctx.into(),
            written_by: "trainlab test".into(),
            auto_mode: false,
            values: [("zone".to_string(), "us-west-2b".to_string())]
                .into_iter()
                .collect(),
        };
        let path = dir.join(name);
        site.save_to(&path).unwrap();
        assert_eq!(Site::load_from(&path).unwrap(), Some(site));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

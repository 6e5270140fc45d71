//! A lab's manifests (`starter/`, `draft/`, `solution/`) as objects, where a command puts them
//! (`Placement`), and applying them to a connected cluster.

use crate::catalog::{LabBundle, SiteFill, PROFILES};
use crate::cluster::{apply_all, apply_rename, learner_renames, prepare, Change, Conn, Discovery};
use crate::facts::Profile;
use crate::observe::{parse_text, Obj};
use crate::plan::learners::{self, Template};
use crate::profile::site::SiteValues;
use crate::verify::Target;

/// The site values fill a lab's files (`LabBundle::files_for`); a value the site lacks is the
/// refusal `SiteValues::render` words, naming the `--param` that gives it.
impl SiteFill for SiteValues {
    type Error = crate::Error;
    fn fill(&self, text: &str, origin: &str) -> Result<String, crate::Error> {
        self.render(text, origin)
    }
}

/// The objects of a lab folder as a profile applies it: `starter/` or `solution/` with the
/// profile's overlay (`solution-eks/`), or `draft/` as it is, every `${site.KEY}` filled from
/// `site` (a value it lacks is a refusal naming the `--param`).
pub fn objects(
    b: &LabBundle,
    folder: &str,
    profile: Profile,
    site: &SiteValues,
) -> Result<Vec<Obj>, crate::Error> {
    let mut out = Vec::new();
    for (rel, text) in b.files_for(folder, profile.as_str(), site)? {
        out.extend(parse_text(&text, &b.path_of(rel))?);
    }
    Ok(out)
}

/// Every object a folder holds under any profile (what `reset` must know about whichever
/// profile applied it), each file once. Only kinds and names are read from them, and no site
/// value is a kind or a name: each `${site.KEY}` is filled with kind's stand-in, so a cluster
/// without a site file can still be reset. These objects are never applied.
fn objects_any_profile(b: &LabBundle, folder: &str) -> Result<Vec<Obj>, crate::Error> {
    let names_only = SiteValues::kind();
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for profile in PROFILES {
        for (rel, text) in b.files_for(folder, profile, &names_only)? {
            if seen.insert(rel) {
                out.extend(parse_text(&text, &b.path_of(rel))?);
            }
        }
    }
    Ok(out)
}

/// What applying a set did.
pub enum Applied {
    /// Every object was applied: what each one is and what happened to it, in order
    /// (`Job/gang-train` and `created`).
    Done(Vec<(String, &'static str)>),
    /// Nothing was written: without force the set would take fields another field manager owns.
    /// One line per field: `ConfigMap/gang-settings .data.queue: now managed by "kubectl-edit"
    /// using v1`.
    Conflicts(Vec<String>),
}

/// A kind `reset` searches for objects labelled for the lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabKind {
    pub group: String,
    pub kind: String,
    /// The apiVersions it may be served at, the verifier's first (one object is served under
    /// every version of its group, so any served one finds it).
    pub api_versions: Vec<String>,
    /// `starter/` has objects of this kind: deleted last, after what was built on them.
    pub starter: bool,
}

/// Kinds a lab's objects never include, whatever a verifier reads: a Node can carry the lab
/// label (a NodePool's template labels reach its nodes) and deleting it would take a machine
/// out of the cluster. Namespaces are handled on their own.
const NEVER_SEARCHED: &[(&str, &str)] = &[("", "Node"), ("", "Namespace")];

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The kinds `reset` searches: those the verifier reads, then those of `starter/`, `draft/`
/// and `solution/`.
pub fn lab_kinds(b: &LabBundle) -> Result<Vec<LabKind>, crate::Error> {
    let mut found: Vec<(String, String, bool)> = Vec::new();
    if let Some(v) = crate::labs::verifier_for(&b.lab.id) {
        for r in v.reads() {
            found.push((r.kind.api_version(), r.kind.kind.to_string(), false));
        }
    }
    for folder in ["starter", "draft", "solution"] {
        for o in objects_any_profile(b, folder)? {
            found.push((
                o.api_version().to_string(),
                o.kind().to_string(),
                folder == "starter",
            ));
        }
    }
    let mut kinds: Vec<LabKind> = Vec::new();
    for (api_version, kind, starter) in found {
        let group = group_of(&api_version).to_string();
        if NEVER_SEARCHED.contains(&(group.as_str(), kind.as_str())) {
            continue;
        }
        match kinds
            .iter_mut()
            .find(|k| k.group == group && k.kind == kind)
        {
            Some(k) => {
                k.starter |= starter;
                if !k.api_versions.contains(&api_version) {
                    k.api_versions.push(api_version);
                }
            }
            None => kinds.push(LabKind {
                group,
                kind,
                api_versions: vec![api_version],
                starter,
            }),
        }
    }
    Ok(kinds)
}

/// The objects the lab's task names: (group, kind, name) of `draft/` and `solution/`, once each.
pub fn task_objects(b: &LabBundle) -> Result<Vec<(String, String, String)>, crate::Error> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    for folder in ["draft", "solution"] {
        for o in objects_any_profile(b, folder)? {
            let named = (
                group_of(o.api_version()).to_string(),
                o.kind().to_string(),
                o.name().to_string(),
            );
            let skip = NEVER_SEARCHED.contains(&(named.0.as_str(), named.1.as_str()));
            if !skip && !out.contains(&named) {
                out.push(named);
            }
        }
    }
    Ok(out)
}

/// Applies folders of a lab into `place.target.namespace` as one set (validated as a whole, so a
/// rejected object in `solution/` leaves no `starter/` object behind). The task's folders (all
/// but `starter/`) get the learner prefix. `force` takes fields other managers own (`solve`
/// only).
pub async fn apply_folders(
    conn: &Conn,
    b: &LabBundle,
    folders: &[&str],
    profile: Profile,
    place: &Placement,
    force: bool,
) -> Result<Applied, crate::Error> {
    let (mut starter, mut task) = (Vec::new(), Vec::new());
    for folder in folders {
        let into = if *folder == "starter" {
            &mut starter
        } else {
            &mut task
        };
        into.extend(objects(b, folder, profile, &place.site)?);
    }
    let discovery = Discovery::new();
    let set = prepare(
        conn,
        &discovery,
        &starter,
        &task,
        &b.lab.id,
        &place.target.namespace,
        &place.target.name_prefix,
    )
    .await?;
    let changes = apply_all(conn, &set, force).await?;
    let mut conflicts = Vec::new();
    for (what, change) in &changes {
        if let Change::Conflicts(fields) = change {
            for c in fields {
                conflicts.push(format!("{what} {}: now managed by {}", c.field, c.manager));
            }
        }
    }
    if !conflicts.is_empty() {
        return Ok(Applied::Conflicts(conflicts));
    }
    let mut done = Vec::new();
    for (what, change) in changes {
        let word = match change {
            Change::Created => "created",
            Change::Configured => "configured",
            Change::Unchanged => "unchanged",
            Change::Kept => "exists, kept as it is (create-only)",
            Change::Foreign => {
                "exists without the trainlab.dev/lab label, used as it is (reset keeps it)"
            }
            // Returned above: a set with conflicts writes nothing.
            Change::Conflicts(_) => continue,
        };
        done.push((what, word));
    }
    Ok(Applied::Done(done))
}

/// Whether an object is namespaced when no cluster can be asked: from the kinds trainlab knows;
/// others are assumed namespaced, as most lab objects are.
fn namespaced_offline(o: &Obj) -> bool {
    crate::observe::kinds::ALL
        .iter()
        .find(|k| k.matches(o.api_version(), o.kind()))
        .map_or(o.kind() != "Namespace", |k| k.namespaced)
}

/// The documents a `--dry-run` would apply, as YAML (the task's folders with the learner prefix).
pub fn render_plan(
    b: &LabBundle,
    folder: &str,
    profile: Profile,
    place: &Placement,
) -> Result<String, crate::Error> {
    let objs = objects(b, folder, profile, &place.site)?;
    let scopes: Vec<bool> = objs.iter().map(|o| !namespaced_offline(o)).collect();
    let prefix = if folder == "starter" {
        ""
    } else {
        &place.target.name_prefix
    };
    let renames = learner_renames(&objs, &scopes, prefix);
    let mut s = String::new();
    for (i, o) in objs.iter().enumerate() {
        let mut v = crate::cluster::label_and_place(o, &b.lab.id, &place.target.namespace);
        if !scopes[i] {
            v["metadata"]["namespace"] = serde_json::Value::String(place.target.namespace.clone());
        }
        for r in renames.iter().filter(|r| r.object == i) {
            apply_rename(&mut v, r);
        }
        s.push_str(&format!("# from {}\n---\n", o.origin));
        s.push_str(&serde_saphyr::to_string(&v).unwrap_or_default());
    }
    Ok(s)
}

/// Where a command puts a lab (its namespace, the learner and the prefix of the task's
/// cluster-scoped objects: `learners::place`, the one reading of `-n` and `--learner`) and the
/// site values its files are filled with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub target: Target,
    /// The site values its files are filled with (`${site.KEY}`); none until
    /// [`Placement::with_site`], so a command that forgets them refuses instead of applying a
    /// placeholder.
    pub site: SiteValues,
}

impl Placement {
    /// The placement with the site values the command resolved
    /// (`SiteValues::resolve(profile, context, --param)`).
    pub fn with_site(mut self, site: SiteValues) -> Placement {
        self.site = site;
        self
    }

    /// [`learners::place`], without site values yet.
    pub fn new(
        lab_id: &str,
        namespace: Option<&str>,
        learner: Option<&str>,
    ) -> Result<Placement, crate::Error> {
        Ok(Placement {
            target: learners::place(lab_id, namespace, learner)?,
            site: SiteValues::default(),
        })
    }

    /// The `trainlab grade` command that finds the learner's lab here: with the default
    /// namespace template, or one made from `-n` when it holds the learner's name once.
    pub fn grade_command(&self, lab_id: &str) -> Option<String> {
        let (learner, namespace) = (self.target.learner.as_deref()?, &self.target.namespace);
        let command = format!("trainlab grade {lab_id} --learners {learner}");
        if Template::default().namespace(learner, lab_id) == *namespace {
            return Some(command);
        }
        if namespace.matches(learner).count() != 1 {
            return None;
        }
        let template = Template::parse(&namespace.replace(learner, "{learner}")).ok()?;
        (template.namespace(learner, lab_id) == *namespace)
            .then(|| format!("{command} --namespace-template {}", template.as_str()))
    }
}

/// A line that starts or ends a YAML document (`---`, `...`), as the parser reads them (YAML
/// 1.2.2, 9.1.4: the marker at the start of a line, then a space, a tab or the line's end).
fn is_marker(line: &str, m: &str) -> bool {
    line.strip_prefix(m).is_some_and(|rest| {
        rest.trim_end_matches(['\n', '\r']).is_empty() || rest.starts_with([' ', '\t'])
    })
}

/// The draft's text in a workshop: the cluster-scoped objects it names (and the fields that name
/// them) carry the learner prefix. Only those values change, in place: the comments and layout
/// are the learner's guide. Every change is proven by reading the result back.
pub fn prefixed_draft(text: &str, origin: &str, prefix: &str) -> Result<String, crate::Error> {
    if prefix.is_empty() {
        return Ok(text.to_string());
    }
    // Read whole first, so a syntax error names the document as the file numbers it.
    parse_text(text, origin)?;
    // The documents as line ranges, each read on its own so objects map to their lines.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut starts: Vec<usize> = (1..lines.len())
        .filter(|&i| is_marker(lines[i], "---"))
        .collect();
    starts.insert(0, 0);
    let docs: Vec<std::ops::Range<usize>> = starts
        .iter()
        .enumerate()
        .map(|(d, &start)| start..starts.get(d + 1).copied().unwrap_or(lines.len()))
        .collect();
    let mut objs: Vec<Obj> = Vec::new();
    let mut doc_of: Vec<(usize, bool)> = Vec::new();
    for (d, range) in docs.iter().enumerate() {
        let found = parse_text(&lines[range.clone()].concat(), origin)?;
        let in_list = found.len() > 1;
        doc_of.extend(found.iter().map(|_| (d, in_list)));
        objs.extend(found);
    }
    let scopes: Vec<bool> = objs.iter().map(|o| !namespaced_offline(o)).collect();
    let renames = learner_renames(&objs, &scopes, prefix);
    if renames.is_empty() {
        return Ok(text.to_string());
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut expected: Vec<serde_json::Value> =
        objs.iter().map(|o| o.value.as_ref().clone()).collect();
    for r in &renames {
        let (d, in_list) = doc_of[r.object];
        let cannot = |why_ja: &str, why: &str| {
            let (name, path, to) = (objs[r.object].display_name(), r.path.join("."), &r.to);
            crate::Error::usage(
                format!("{origin}: {name} に受講者の接頭辞をその場で付けられません（{path}: {why_ja}）。--learner なしで下書きを書き出し、手で {to} に名前を変えてください"),
                format!("{origin}: cannot give {name} the learner prefix in place ({path}: {why}); write the draft without --learner and rename it to {to} by hand"),
            )
        };
        if in_list {
            return Err(cannot("List の要素です", "an item of a List"));
        }
        let range = docs[d].clone();
        let doc_lines: Vec<&str> = out[range.clone()].iter().map(String::as_str).collect();
        let at = locate(&doc_lines, r.path).ok_or_else(|| {
            cannot(
                "ブロック形式のマッピングとして見つかりません",
                "not found as a block mapping",
            )
        })?;
        let edited = replace_scalar(&out[range.start + at], &r.from, &r.to).ok_or_else(|| {
            cannot(
                "その行の値がプレーンでも引用符付きでもありません",
                "not a plain or quoted value on its line",
            )
        })?;
        out[range.start + at] = edited;
        apply_rename(&mut expected[r.object], r);
    }
    let result = out.concat();
    let back: Vec<serde_json::Value> = parse_text(&result, origin)?
        .into_iter()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.value))
        .collect();
    if back != expected {
        return Err(crate::Error::usage(
            format!("{origin}: 受講者の接頭辞を付けた下書きを読み直すと、期待どおりになりません。--learner なしで書き出し、cluster-scoped のオブジェクトの名前を手で変えてください"),
            format!("{origin}: the draft with the learner prefix does not read back as expected; write it without --learner and rename its cluster-scoped objects by hand"),
        ));
    }
    Ok(result)
}

/// The index of the line holding the mapping key at `path` (from the document's root) in
/// block-style YAML, or None. Lists are walked past, never into: no rename path has one.
fn locate(lines: &[&str], path: &[&str]) -> Option<usize> {
    // (indent, key) of the mappings the current line is in; `-` marks a list item.
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut block_under: Option<usize> = None;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let mut indent = line.len() - line.trim_start_matches(' ').len();
        let mut content = &line[indent..];
        if let Some(b) = block_under {
            if content.is_empty() || indent > b {
                continue; // inside a `|` or `>` scalar
            }
            block_under = None;
        }
        if content.is_empty()
            || content.starts_with('#')
            || is_marker(line, "---")
            || is_marker(line, "...")
        {
            continue;
        }
        while content == "-" || content.starts_with("- ") {
            stack.retain(|(ind, _)| *ind < indent);
            stack.push((indent, "-".into()));
            let rest = content[1..].trim_start_matches(' ');
            indent += content.len() - rest.len();
            content = rest;
        }
        let Some((key, value)) = split_key(content) else {
            continue;
        };
        stack.retain(|(ind, _)| *ind < indent);
        let here = stack.iter().map(|(_, k)| k.as_str()).chain([key.as_str()]);
        if here.eq(path.iter().copied()) {
            return Some(i);
        }
        if value.starts_with(['|', '>']) {
            block_under = Some(indent);
        }
        stack.push((indent, key));
    }
    None
}

/// `key: value # comment` → (key, value and comment), the key unquoted.
fn split_key(content: &str) -> Option<(String, &str)> {
    let (key, rest) = match content.chars().next()? {
        q @ ('"' | '\'') => {
            let end = content[1..].find(q)? + 1;
            (content[1..end].to_string(), &content[end + 1..])
        }
        _ => {
            let end = content.match_indices(':').map(|(i, _)| i).find(|&i| {
                content[i + 1..].is_empty() || content[i + 1..].starts_with([' ', '\t'])
            })?;
            (content[..end].trim_end().to_string(), &content[end..])
        }
    };
    let rest = rest.strip_prefix(':')?;
    Some((key, rest.trim_start()))
}

/// The line with the value after its key changed from `from` to `to`, quotes, spacing and
/// comment kept; None when the value is not `from` as a plain or quoted scalar.
fn replace_scalar(line: &str, from: &str, to: &str) -> Option<String> {
    let indent = line.len() - line.trim_start_matches([' ', '-']).len();
    let (_, value) = split_key(&line[indent..])?;
    let start = line.len() - value.len();
    let end = match value.chars().next()? {
        q @ ('"' | '\'') => {
            let close = value[1..].find(q)? + 1;
            (&value[1..close] == from).then_some(())?;
            return Some(format!(
                "{}{q}{to}{q}{}",
                &line[..start],
                &value[close + 1..]
            ));
        }
        _ => {
            let body = value.trim_end_matches(['\n', '\r']);
            let plain = body.find(" #").map_or(body, |c| &body[..c]).trim_end();
            plain.len()
        }
    };
    (&value[..end] == from).then(|| format!("{}{to}{}", &line[..start], &value[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_knows_the_kinds_and_names_of_files_with_site_tokens_without_a_site() {
        let catalog = crate::catalog::Catalog::embedded().unwrap();
        let b = catalog.get("karpenter-single-az").unwrap();
        assert!(b
            .raw_files_for("starter", "eks")
            .iter()
            .any(|(_, t)| t.contains("${site.")));
        let kinds: Vec<String> = lab_kinds(b).unwrap().into_iter().map(|k| k.kind).collect();
        assert!(kinds.contains(&"EC2NodeClass".to_string()), "{kinds:?}");
        let named = task_objects(b).unwrap();
        assert!(named
            .iter()
            .any(|(_, k, n)| k == "NodePool" && n == "gpu-training"));
        // Applying is another matter: without the site's values the EKS starter is refused.
        let empty = SiteValues::default();
        let e = objects(b, "starter", Profile::Eks, &empty)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--param node_role="), "{e}");
    }

    const DRAFT: &str = "\
# A PVC on a class of its own; keep the comments.
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  labels:
    trainlab.dev/lab: x   # keep
  name: \"fsx\"   # your prefix first
provisioner: fsx.csi.aws.com
parameters:
  script: |
    name: fsx
  name: fsx
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes:
  - ReadWriteMany
  # TODO: the class
  storageClassName: 'fsx'
  resources:
    requests: {storage: 1200Gi}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: fsx
data:
  storageClassName: fsx
";

    #[test]
    fn the_draft_gets_the_prefix_in_place_and_keeps_every_other_line() {
        let out = prefixed_draft(DRAFT, "draft.yaml", "alice-").unwrap();
        let changed: Vec<(&str, &str)> = DRAFT
            .lines()
            .zip(out.lines())
            .filter(|(a, b)| a != b)
            .collect();
        assert_eq!(DRAFT.lines().count(), out.lines().count());
        assert_eq!(
            changed,
            [
                (
                    "  name: \"fsx\"   # your prefix first",
                    "  name: \"alice-fsx\"   # your prefix first"
                ),
                (
                    "  storageClassName: 'fsx'",
                    "  storageClassName: 'alice-fsx'"
                ),
            ],
            "the block scalar, the parameter and the namespaced ConfigMap stay"
        );
        assert_eq!(prefixed_draft(DRAFT, "draft.yaml", "").unwrap(), DRAFT);
    }

    #[test]
    fn a_draft_that_cannot_be_edited_in_place_is_refused_with_the_file_and_field() {
        let flow = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: gpu-training}\n";
        let e = prefixed_draft(flow, "labs/x/draft/pool.yaml", "alice-")
            .unwrap_err()
            .to_string();
        assert!(e.contains("labs/x/draft/pool.yaml"), "{e}");
        assert!(e.contains("metadata.name"), "{e}");
        assert!(e.contains("alice-gpu-training"), "{e}");
    }

    #[test]
    fn locate_walks_past_lists_and_block_scalars() {
        let lines = [
            "spec:\n",
            "  tasks:\n",
            "  - name: a\n",
            "    template:\n",
            "      name: b\n",
            "  script: >-\n",
            "    queue: no\n",
            "  queue: yes # here\n",
        ];
        assert_eq!(locate(&lines, &["spec", "queue"]), Some(7));
        assert_eq!(locate(&lines, &["spec", "name"]), None);
        assert_eq!(locate(&lines, &["spec", "template", "name"]), None);
        assert_eq!(
            replace_scalar(lines[7], "yes", "alice-yes").as_deref(),
            Some("  queue: alice-yes # here\n")
        );
        assert_eq!(replace_scalar(lines[7], "no", "x"), None);
    }
}

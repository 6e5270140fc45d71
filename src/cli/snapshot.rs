//! `trainlab snapshot LAB... DIR` — save exactly what grading these labs reads, read-only, in the
//! form `check --snapshot DIR` reads back (instructors capture a learner's state; tests
//! round-trip it).

use std::path::PathBuf;

use clap::Args;

use super::live::{runtime, Screen};
use super::{print, Global};
use crate::exit::ExitCode;
use crate::observe::save;
use crate::plan::{self, Output, Plan, Repeat, Request, RunOptions, Source};
use crate::report::Format;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  trainlab snapshot 9 ./saved                 what lab 9 reads, from the current kube context
  trainlab snapshot --all ./all-labs
  trainlab check 9 --snapshot ./saved         grade it later, offline

Never writes to the cluster. Secrets are saved as metadata only.")]
pub struct SnapshotArgs {
    /// The labs whose reads to save (number, id or folder), then the folder to write (created
    /// if missing); with --all, only the folder
    #[arg(value_name = "LAB... DIR", required = true, num_args = 1..)]
    pub args: Vec<String>,
    /// Every gradable lab
    #[arg(long)]
    pub all: bool,
    /// Namespace of the lab [default: trainlab-<lab id>]; only with one lab
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// Replace an earlier snapshot in DIR (a folder holding anything else is always refused)
    #[arg(long)]
    pub force: bool,
}

pub fn run(g: &Global, a: &SnapshotArgs) -> Result<ExitCode, crate::Error> {
    let catalog = g.catalog()?;
    let Some((dir, labs)) = a.args.split_last() else {
        return Err(crate::Error::usage(
            "書き出し先のフォルダーを指定してください",
            "give the folder to write",
        ));
    };
    let dir = PathBuf::from(dir);
    if a.all != labs.is_empty() {
        return Err(crate::Error::usage(
            "lab に続けて書き出し先のフォルダーを指定するか（`trainlab snapshot 9 ./saved`）、--all とフォルダーを指定してください",
            "give the labs then the folder (`trainlab snapshot 9 ./saved`), or --all and the folder",
        ));
    }
    // Before any read: a folder that holds anything but a snapshot of trainlab's is never
    // written into, and an earlier snapshot is replaced only with --force.
    let replaced = earlier_snapshot(&dir, a.force)?;
    let plan = Plan::resolve(
        &catalog,
        Request {
            labs: labs.to_vec(),
            all: a.all,
            namespace: a.namespace.clone(),
            learner: None,
            params: Vec::new(),
            options: RunOptions {
                source: Source::Live(g.connect_opts()),
                profile: None,
                repeat: Repeat::Once,
                server_dry_run: None,
                limits: g.limits(),
                output: Output {
                    format: Format::Human,
                    lang: g.lang(),
                },
            },
        },
    )?;
    let mut screen = Screen::new(&plan.options);
    let answers = runtime()?.block_on(plan::capture(&plan, &mut screen))?;
    std::fs::create_dir_all(&dir).map_err(|e| {
        let d = dir.display();
        crate::Error::usage(
            format!("{d} を作成できません: {e}"),
            format!("cannot create {d}: {e}"),
        )
    })?;
    if !replaced.is_empty() {
        print(&format!(
            "replacing the earlier snapshot in {} ({})\n",
            dir.display(),
            files(replaced.len())
        ));
        for f in &replaced {
            std::fs::remove_file(f).map_err(|e| {
                let p = f.display();
                crate::Error::usage(
                    format!("{p} を削除できません: {e}"),
                    format!("cannot remove {p}: {e}"),
                )
            })?;
        }
    }
    let mut failed = Vec::new();
    let mut not_served = Vec::new();
    let mut written = 0;
    for (i, (q, r)) in answers.iter().enumerate() {
        let objs = match r {
            Ok(o) => o,
            // Nothing of a kind the cluster does not serve can exist (EKS Auto Mode's NodeClass
            // on another cluster): nothing to save, and not a failure.
            Err(crate::observe::Unavailable::NotServed { .. }) => {
                not_served.push(q.describe());
                continue;
            }
            Err(why) => {
                failed.push(format!("  {}: {why}", q.describe()));
                continue;
            }
        };
        let path = dir.join(save::file_name(i, q));
        std::fs::write(&path, save::to_list_json(q, objs)).map_err(|e| {
            let p = path.display();
            crate::Error::usage(
                format!("{p} に書き込めません: {e}"),
                format!("cannot write {p}: {e}"),
            )
        })?;
        print(&format!(
            "wrote {} ({})\n",
            path.display(),
            objects(objs.len())
        ));
        written += 1;
    }
    if !not_served.is_empty() {
        print(&format!(
            "not served by this cluster, so nothing of these kinds exists to save: {}\n",
            not_served.join(", ")
        ));
    }
    if !failed.is_empty() {
        let (total, failed) = (answers.len(), failed.join("\n"));
        return Err(crate::Error::environment(
            format!("{total} 件の読み取りのうち {written} 件を保存しました。次のものは読み取れませんでした:\n{failed}"),
            format!("saved {written} of {total} reads; these could not be read:\n{failed}"),
        ));
    }
    print(&format!(
        "\ngrade it offline: trainlab check {} --snapshot {}\n",
        if a.all {
            "--all".to_string()
        } else {
            labs.join(" ")
        },
        dir.display()
    ));
    Ok(ExitCode::Ok)
}

/// The files of an earlier snapshot in `dir`, to be replaced (with `force`); nothing for a
/// missing or empty folder. A folder holding anything else (a file trainlab did not write, a
/// sub-folder) is refused whatever the flags: `snapshot LAB /` must never write into `/`.
fn earlier_snapshot(dir: &std::path::Path, force: bool) -> Result<Vec<PathBuf>, crate::Error> {
    let d = dir.display();
    if dir.exists() && !dir.is_dir() {
        return Err(crate::Error::usage(
            format!("{d} はフォルダーではありません。空のフォルダーか、まだないフォルダーを指定してください"),
            format!("{d} is not a folder; name an empty folder or one that does not exist yet"),
        ));
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(crate::Error::usage(
                format!("{d} を読み込めません: {e}"),
                format!("cannot read {d}: {e}"),
            ))
        }
    };
    let mut ours = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !save::is_snapshot_file(&path) {
            let p = path.display();
            return Err(crate::Error::usage(
                format!("{d} は空ではなく、trainlab のスナップショット以外のもの（{p}）があります。空のフォルダーか、まだないフォルダーを指定してください"),
                format!("{d} is not empty and holds what is not a trainlab snapshot ({p}); name an empty folder or one that does not exist yet"),
            ));
        }
        ours.push(path);
    }
    if !ours.is_empty() && !force {
        let n = files(ours.len());
        return Err(crate::Error::usage(
            format!("{d} はすでにあり、以前のスナップショット（{n}）があります。置き換えるには --force を指定するか、空のフォルダーを指定してください"),
            format!("{d} already exists and holds an earlier snapshot ({n}); pass --force to replace it, or name an empty folder"),
        ));
    }
    ours.sort();
    Ok(ours)
}

/// `1 file`, `3 files`.
fn files(n: usize) -> String {
    if n == 1 {
        "1 file".into()
    } else {
        format!("{n} files")
    }
}

/// `1 object`, `3 objects`.
fn objects(n: usize) -> String {
    match n {
        1 => "1 object".to_string(),
        n => format!("{n} objects"),
    }
}

#[cfg(test)]
mod count_tests {
    #[test]
    fn one_object_is_singular() {
        assert_eq!(super::objects(1), "1 object");
        assert_eq!(super::objects(0), "0 objects");
        assert_eq!(super::objects(12), "12 objects");
    }
}

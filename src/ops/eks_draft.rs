//! The draft as `start --profile eks` writes it: the kind profile's trainer stand-in taken out.
//!
//! On kind a draft's `torchrun` is the stand-in's shim (`PATH` leads to the `trainer-standin`
//! ConfigMap mounted at `/opt/trainlab/bin`, `TRAINLAB_STANDIN_GPUS` says how many GPUs it
//! pretends to see). On EKS the image's own `torchrun` must run: the env entries, the mount and
//! the volume go, in place, with their comments (the rest of the draft is the learner's guide,
//! as written), and the EKS starter does not apply the ConfigMap (`starter-eks/`). A draft that
//! runs the stand-in itself as its command (labs 11 and 14: `python3 /opt/trainlab/bin/
//! trainer.py`) keeps it: without it the draft would not start at all.

use crate::observe::parse_text;

/// The env entries and volumes that belong to the stand-in, by name; `PATH` only where it leads
/// to the stand-in's folder.
const STANDIN_NAMES: &[&str] = &["trainer-standin", "TRAINLAB_STANDIN_GPUS"];
const STANDIN_DIR: &str = "/opt/trainlab/";

/// `text` without the stand-in's env entries, mount and volume (and a list key left empty by
/// their going); None when the draft has none, or still needs the stand-in afterwards (it runs
/// it as its command). The result reads back as the same objects, or it is an error naming
/// the file.
pub fn without_standin(text: &str, origin: &str) -> Result<Option<String>, crate::Error> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut keep = vec![true; lines.len()];
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = item_name(line) else {
            continue;
        };
        let end = block_end(&lines, i);
        let block = lines[i..end].concat();
        let standin = STANDIN_NAMES.contains(&name.as_str())
            || (name == "PATH" && block.contains(STANDIN_DIR));
        if standin {
            keep[i..end].iter_mut().for_each(|k| *k = false);
        }
    }
    if keep.iter().all(|k| *k) {
        return Ok(None);
    }
    drop_emptied_keys(&lines, &mut keep);
    let result: String = lines
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(l, _)| *l)
        .collect();
    if result.contains(STANDIN_DIR) || result.contains(STANDIN_NAMES[0]) {
        return Ok(None);
    }
    let before = parse_text(text, origin)?.len();
    let after = parse_text(&result, origin).map(|o| o.len()).ok();
    if after != Some(before) {
        return Err(crate::Error::environment(
            format!("{origin}: trainer-standin を外した EKS 用の下書きを読み直せません（trainlab の不具合です）"),
            format!("{origin}: the EKS draft without the trainer stand-in does not read back (a trainlab bug)"),
        ));
    }
    Ok(Some(result))
}

/// `- name: X` (a list item's first key), X unquoted and without its comment.
fn item_name(line: &str) -> Option<String> {
    let rest = line.trim_start().strip_prefix("- name:")?;
    let value = rest.split(" #").next()?.trim();
    Some(value.trim_matches(['"', '\'']).to_string())
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The end (exclusive) of the list item starting at `start`: the lines indented past its dash.
fn block_end(lines: &[&str], start: usize) -> usize {
    let dash = indent(lines[start]);
    let mut end = start + 1;
    while end < lines.len() && !lines[end].trim().is_empty() && indent(lines[end]) > dash {
        end += 1;
    }
    end
}

/// Removes a kept `key:` line with no value whose list lost every item (`volumes:` with only
/// the stand-in's volume): the next kept line that is not blank or a comment is not deeper.
fn drop_emptied_keys(lines: &[&str], keep: &mut [bool]) {
    for i in 0..lines.len() {
        if !keep[i] {
            continue;
        }
        let t = lines[i].trim();
        let bare_key = t.ends_with(':') && !t.starts_with('-') && !t.starts_with('#');
        if !bare_key {
            continue;
        }
        let next = (i + 1..lines.len()).find(|&j| keep[j] && !is_blank_or_comment(lines[j]));
        let emptied = next.is_none_or(|j| indent(lines[j]) <= indent(lines[i]));
        // Only a key whose items were taken out here: one that was empty before stays.
        let had_items = (i + 1..lines.len())
            .find(|&j| !is_blank_or_comment(lines[j]))
            .is_some_and(|j| indent(lines[j]) > indent(lines[i]));
        if emptied && had_items {
            keep[i] = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAFT: &str = "\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: pytorch
      image: python:3.13-slim         # TODO: the image
      command: [\"torchrun\"]
      env:
        - name: PATH                  # kind: `torchrun` is the stand-in's shim
          value: /opt/trainlab/bin:/usr/local/bin:/usr/bin:/bin
        - name: TRAINLAB_STANDIN_GPUS # kind: the GPUs torch would see
          value: \"8\"
        - name: NCCL_DEBUG
          value: INFO
      volumeMounts:
        - name: trainer-standin
          mountPath: /opt/trainlab/bin
          readOnly: true
  volumes:
    - name: trainer-standin
      configMap:
        name: trainer-standin
        defaultMode: 0555
";

    #[test]
    fn the_stand_in_goes_and_every_other_line_stays() {
        let eks = without_standin(DRAFT, "d.yaml").unwrap().unwrap();
        assert_eq!(
            eks,
            "\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: pytorch
      image: python:3.13-slim         # TODO: the image
      command: [\"torchrun\"]
      env:
        - name: NCCL_DEBUG
          value: INFO
"
        );
    }

    #[test]
    fn a_draft_without_the_stand_in_or_running_it_as_its_command_is_kept() {
        assert_eq!(
            without_standin("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "d.yaml").unwrap(),
            None
        );
        let runs_it = DRAFT.replace(
            "command: [\"torchrun\"]",
            "command: [\"python3\", \"/opt/trainlab/bin/trainer.py\"]",
        );
        assert_eq!(without_standin(&runs_it, "d.yaml").unwrap(), None);
    }
}

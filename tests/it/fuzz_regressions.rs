//! Inputs the fuzzers found (issue 15), replayed on the stable toolchain through the very entry
//! points the fuzz targets call: `fuzz/src/lib.rs`, included here by path. Each file under
//! `tests/data/fuzz/<target>/` once made trainlab panic, hang or answer bad input with a grade;
//! it must now come back as a clean verdict (read, or refused with a typed error). No clock is
//! read here: a hang is named by the libFuzzer replay of the same inputs in `.ci/run`.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

use std::path::{Path, PathBuf};

use fuzz::Verdict;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Replays `data` through `target`, returning a description of what went wrong, if anything.
fn replay(target: &str, name: &str, data: &[u8]) -> Option<String> {
    // No clock here: an input that hangs again hangs this test, and the replay of the same
    // inputs in `.ci/run` (libFuzzer, `-timeout=30`) names it.
    let verdict = std::panic::catch_unwind(|| fuzz::run(target, data));
    match verdict {
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(format!("{target}/{name}: panicked: {msg}"))
        }
        Ok(Verdict::Ignored) => Some(format!(
            "{target}/{name}: not an input the target reads (saved by mistake?)"
        )),
        Ok(Verdict::Rejected(m)) if m.trim().is_empty() => {
            Some(format!("{target}/{name}: refused with an empty message"))
        }
        Ok(_) => None,
    }
}

#[test]
fn every_saved_fuzz_input_comes_back_clean() {
    let saved = root().join("tests/data/fuzz");
    let mut problems = Vec::new();
    let mut replayed = 0;
    for (target, _) in fuzz::TARGETS {
        for f in files_in(&saved.join(target)) {
            let data = std::fs::read(&f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            problems.extend(replay(target, &name, &data));
            replayed += 1;
        }
    }
    // Every folder there belongs to a target (a renamed target must move its inputs).
    for d in std::fs::read_dir(&saved).unwrap().flatten() {
        let name = d.file_name().to_string_lossy().to_string();
        if d.path().is_dir() && !fuzz::TARGETS.iter().any(|(t, _)| *t == name) {
            problems.push(format!(
                "tests/data/fuzz/{name}: no fuzz target of that name"
            ));
        }
    }
    assert!(replayed > 0, "no saved inputs under {}", saved.display());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_target_has_a_fuzz_target_file_and_reads_empty_input() {
    let dir = root().join("fuzz/fuzz_targets");
    let files: Vec<String> = files_in(&dir)
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    let names: Vec<&str> = fuzz::TARGETS.iter().map(|(t, _)| *t).collect();
    let mut sorted_names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    sorted_names.sort();
    assert_eq!(
        files, sorted_names,
        "fuzz/fuzz_targets/*.rs and TARGETS differ"
    );
    for t in names {
        assert_eq!(replay(t, "(empty)", b""), None);
    }
}

/// The harness itself must not cry wolf: the shipped labs and their reference answers are read
/// and graded without a property violation (a false alarm would bury real findings).
#[test]
fn the_harness_accepts_the_shipped_labs_and_solutions() {
    let mut labs: Vec<PathBuf> = std::fs::read_dir(root().join("labs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("lab.yaml").is_file())
        .collect();
    labs.sort();
    assert!(!labs.is_empty());
    for lab in labs {
        let text = std::fs::read(lab.join("lab.yaml")).unwrap();
        assert_eq!(
            fuzz::run("catalog", &text),
            Verdict::Accepted,
            "{}",
            lab.display()
        );
        let solution = lab.join("solution");
        if solution.is_dir() {
            let mut all = vec![0u8]; // the learner's files, profile detected
            for f in files_in(&solution) {
                all.extend(b"---\n");
                all.extend(std::fs::read(&f).unwrap());
            }
            assert_eq!(
                fuzz::run("judge", &all),
                Verdict::Accepted,
                "{}",
                solution.display()
            );
        }
    }
    // Each saved state of the test suite, unedited (state index, mode, no edits).
    for i in 0..8u8 {
        assert_eq!(replay("judge_mutate", "(unedited)", &[0, i, 1]), None);
    }
}

/// Found by `catalog_mutate` (its input is saved beside this one, replayed above): two checks
/// weighing 4294967295 made `LabResult::score` add past u32::MAX (a panic in debug builds, a
/// wrapped score in release). Weights are now bounded when the lab is read, naming the field.
#[test]
fn check_weights_that_overflow_the_score_are_refused_naming_the_weight() {
    let saved = root().join("tests/data/fuzz");
    let lab = std::fs::read(saved.join("catalog/check-weights-overflow-the-score.yaml")).unwrap();
    match fuzz::run("catalog", &lab) {
        Verdict::Rejected(m) => {
            assert!(m.contains("field `checks[0].weight`"), "{m}");
            assert!(m.contains("from 1 to 100, found 4294967295"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

//! Which DeepSpeed config file a training script is given on its command line.

use super::super::args::Args;
use super::super::Setting;

/// The DeepSpeed config a script is given: HF `--deepspeed PATH`, or DeepSpeed's own
/// `--deepspeed_config PATH` (`deepspeed.add_config_arguments`, where `--deepspeed` is a bare
/// switch). The last written wins.
pub fn deepspeed_config_arg(a: &Args) -> Option<Setting<String>> {
    let flag = a
        .flags(&["deepspeed", "deepspeed_config"])
        .into_iter()
        .rfind(|f| f.value().is_some())?;
    Setting::read(flag.spelling, flag.value()?, "a path", |s| {
        Some(s.to_string())
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn deepspeed_config_argument_in_both_conventions() {
        let a = Args::new(words("--deepspeed --deepspeed_config ds_z3.json"));
        let s = deepspeed_config_arg(&a).unwrap();
        assert_eq!(
            (s.source.as_str(), s.known().map(String::as_str)),
            ("--deepspeed_config", Some("ds_z3.json"))
        );
        let a = Args::new(words("--deepspeed ds.json"));
        assert_eq!(deepspeed_config_arg(&a).unwrap().source, "--deepspeed");
        assert_eq!(deepspeed_config_arg(&Args::new(words("--deepspeed"))), None);
    }
}

//! DeepSpeed config JSON (deepspeedai/DeepSpeed v0.19.5 `docs/_pages/config-json.md`,
//! `deepspeed/runtime/zero/config.py`, `zero/offload_config.py`, `runtime/config.py`).
//!
//! Only the fields the labs grade are typed; unknown fields are ignored, as DeepSpeed does for
//! most sections. `"auto"` is accepted where the Hugging Face Trainer fills it from its own
//! arguments (transformers `integrations/deepspeed.py` `HfTrainerDeepSpeedConfig`): the batch
//! sizes, gradient accumulation and `fp16`/`bf16` `enabled`.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

/// A value the HF Trainer may fill in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DsValue<T> {
    Value(T),
    /// `"auto"`: taken from the matching `TrainingArguments` value.
    Auto,
}

impl<T> DsValue<T> {
    pub fn value(&self) -> Option<&T> {
        match self {
            DsValue::Value(v) => Some(v),
            DsValue::Auto => None,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for DsValue<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        if v.as_str() == Some("auto") {
            return Ok(DsValue::Auto);
        }
        T::deserialize(v)
            .map(DsValue::Value)
            .map_err(|e| de::Error::custom(format!("{e}, or \"auto\"")))
    }
}

/// `zero_optimization.stage`, or the legacy `"zero_optimization": true|false` (true means
/// stage 1, with a deprecation warning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZeroStage {
    Stage(u8),
    Legacy(bool),
}

/// `offload_optimizer.device` / `offload_param.device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OffloadDevice {
    None,
    Cpu,
    Nvme,
}

/// `offload_optimizer` / `offload_param`. `pin_memory` defaults to true from DeepSpeed v0.19.5
/// (false before); unset is None here so the verifier can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Offload {
    pub device: Option<OffloadDevice>,
    pub pin_memory: Option<bool>,
    pub nvme_path: Option<String>,
}

/// The graded part of a DeepSpeed config.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DsConfig {
    /// None when there is no `zero_optimization` (stage 0), or it has no `stage` (also 0).
    pub zero_stage: Option<ZeroStage>,
    pub offload_optimizer: Option<Offload>,
    pub offload_param: Option<Offload>,
    pub bf16: Option<Bf16>,
    /// True when the bf16 settings come from the legacy `bfloat16` key (read only when `bf16`
    /// is absent, DeepSpeed `get_bfloat16_config`).
    pub bf16_legacy_key: bool,
    pub fp16: Option<Fp16>,
    pub train_micro_batch_size_per_gpu: Option<DsValue<i64>>,
    pub gradient_accumulation_steps: Option<DsValue<i64>>,
    pub train_batch_size: Option<DsValue<i64>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Bf16 {
    pub enabled: Option<DsValue<bool>>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Fp16 {
    pub enabled: Option<DsValue<bool>>,
    /// 0.0 means dynamic loss scaling; anything else is a static scale.
    pub loss_scale: Option<f64>,
    /// Dynamic scaling starts at 2^this (default 16).
    pub initial_scale_power: Option<i64>,
}

/// Why a config cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DsConfigError {
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    /// A field of the wrong type or value; `path` is the JSON path (`zero_optimization.stage`).
    #[error("{path}: {message}")]
    Field { path: String, message: String },
}

#[derive(Deserialize)]
struct Raw {
    zero_optimization: Option<RawZeroSection>,
    bf16: Option<Bf16>,
    bfloat16: Option<Bf16>,
    fp16: Option<Fp16>,
    train_micro_batch_size_per_gpu: Option<DsValue<i64>>,
    gradient_accumulation_steps: Option<DsValue<i64>>,
    train_batch_size: Option<DsValue<i64>>,
}

#[derive(Deserialize)]
struct RawZero {
    stage: Option<i64>,
    offload_optimizer: Option<Offload>,
    offload_param: Option<Offload>,
}

enum RawZeroSection {
    Legacy(bool),
    Section(RawZero),
}

impl<'de> Deserialize<'de> for RawZeroSection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawZeroSection;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object (or the legacy true/false)")
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<RawZeroSection, E> {
                Ok(RawZeroSection::Legacy(b))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawZeroSection, A::Error> {
                // Through the same MapAccess, so field paths stay tracked.
                RawZero::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawZeroSection::Section)
            }
        }
        d.deserialize_any(V)
    }
}

/// DeepSpeed's highest ZeRO stage (`DeepSpeedConfig: Maximum supported ZeRO stage is 3`).
const MAX_STAGE: i64 = 3;

impl DsConfig {
    /// Parses config text. Syntax errors carry serde_json's line and column; type errors the
    /// JSON path of the field.
    pub fn parse(text: &str) -> Result<DsConfig, DsConfigError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| DsConfigError::Syntax {
                line: e.line(),
                column: e.column(),
                message: syntax_message(&e),
            })?;
        if !value.is_object() {
            return Err(DsConfigError::Field {
                path: "(top level)".into(),
                message: "expected a JSON object".into(),
            });
        }
        let raw: Raw =
            serde_path_to_error::deserialize(&value).map_err(|e| DsConfigError::Field {
                path: e.path().to_string(),
                message: e.inner().to_string(),
            })?;
        let (zero_stage, offload_optimizer, offload_param) = match raw.zero_optimization {
            None => (None, None, None),
            Some(RawZeroSection::Legacy(b)) => (Some(ZeroStage::Legacy(b)), None, None),
            Some(RawZeroSection::Section(z)) => {
                let stage = match z.stage {
                    None => None,
                    Some(s) if (0..=MAX_STAGE).contains(&s) => {
                        Some(ZeroStage::Stage(u8::try_from(s).unwrap_or(0)))
                    }
                    Some(s) if s > MAX_STAGE => {
                        return Err(DsConfigError::Field {
                            path: "zero_optimization.stage".into(),
                            message: format!("{s}: Maximum supported ZeRO stage is 3"),
                        })
                    }
                    Some(s) => {
                        return Err(DsConfigError::Field {
                            path: "zero_optimization.stage".into(),
                            message: format!("{s}: expected 0, 1, 2 or 3"),
                        })
                    }
                };
                (stage, z.offload_optimizer, z.offload_param)
            }
        };
        let bf16_legacy_key = raw.bf16.is_none() && raw.bfloat16.is_some();
        Ok(DsConfig {
            zero_stage,
            offload_optimizer,
            offload_param,
            bf16: raw.bf16.or(raw.bfloat16),
            bf16_legacy_key,
            fp16: raw.fp16,
            train_micro_batch_size_per_gpu: raw.train_micro_batch_size_per_gpu,
            gradient_accumulation_steps: raw.gradient_accumulation_steps,
            train_batch_size: raw.train_batch_size,
        })
    }

    /// The ZeRO stage in effect: 0 when unset, 1 for the legacy `true`.
    pub fn effective_stage(&self) -> u8 {
        match self.zero_stage {
            None | Some(ZeroStage::Legacy(false)) => 0,
            Some(ZeroStage::Legacy(true)) => 1,
            Some(ZeroStage::Stage(s)) => s,
        }
    }

    /// `bf16.enabled` (or `bfloat16.enabled`); None when unset (DeepSpeed's default is false).
    pub fn bf16_enabled(&self) -> Option<DsValue<bool>> {
        self.bf16.as_ref().and_then(|b| b.enabled)
    }

    /// `fp16.enabled`; None when unset (default false).
    pub fn fp16_enabled(&self) -> Option<DsValue<bool>> {
        self.fp16.as_ref().and_then(|f| f.enabled)
    }

    /// The JSON path bf16 was read from, for messages.
    pub fn bf16_path(&self) -> &'static str {
        if self.bf16_legacy_key {
            "bfloat16.enabled"
        } else {
            "bf16.enabled"
        }
    }
}

/// serde_json's message without its trailing " at line L column C" (the error has both).
fn syntax_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match full.rfind(" at line ") {
        Some(i) => full.get(..i).unwrap_or(&full).to_string(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_zero3_offload_config() {
        let ds = DsConfig::parse(
            r#"{
              "train_batch_size": 64,
              "train_micro_batch_size_per_gpu": 2,
              "gradient_accumulation_steps": 4,
              "bf16": {"enabled": true},
              "fp16": {"enabled": false, "loss_scale": 0, "initial_scale_power": 16},
              "zero_optimization": {
                "stage": 3,
                "offload_optimizer": {"device": "cpu", "pin_memory": true},
                "offload_param": {"device": "nvme", "nvme_path": "/local_nvme", "pin_memory": false},
                "overlap_comm": true,
                "stage3_prefetch_bucket_size": "auto"
              },
              "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
              "steps_per_print": 100
            }"#,
        )
        .unwrap();
        assert_eq!(ds.zero_stage, Some(ZeroStage::Stage(3)));
        assert_eq!(ds.effective_stage(), 3);
        assert_eq!(
            ds.offload_optimizer,
            Some(Offload {
                device: Some(OffloadDevice::Cpu),
                pin_memory: Some(true),
                nvme_path: None
            })
        );
        assert_eq!(
            ds.offload_param,
            Some(Offload {
                device: Some(OffloadDevice::Nvme),
                pin_memory: Some(false),
                nvme_path: Some("/local_nvme".into())
            })
        );
        assert_eq!(ds.bf16_enabled(), Some(DsValue::Value(true)));
        assert_eq!(ds.fp16_enabled(), Some(DsValue::Value(false)));
        let fp16 = ds.fp16.as_ref().unwrap();
        assert_eq!(
            (fp16.loss_scale, fp16.initial_scale_power),
            (Some(0.0), Some(16))
        );
        assert_eq!(ds.train_batch_size, Some(DsValue::Value(64)));
        assert_eq!(ds.train_micro_batch_size_per_gpu, Some(DsValue::Value(2)));
        assert_eq!(ds.gradient_accumulation_steps, Some(DsValue::Value(4)));
    }

    #[test]
    fn auto_values_as_the_hf_trainer_fills_them() {
        let ds = DsConfig::parse(
            r#"{"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
                "gradient_accumulation_steps": "auto", "bf16": {"enabled": "auto"},
                "fp16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}"#,
        )
        .unwrap();
        assert_eq!(ds.train_batch_size, Some(DsValue::Auto));
        assert_eq!(ds.train_micro_batch_size_per_gpu, Some(DsValue::Auto));
        assert_eq!(ds.gradient_accumulation_steps, Some(DsValue::Auto));
        assert_eq!(ds.bf16_enabled(), Some(DsValue::Auto));
        assert_eq!(ds.fp16_enabled(), Some(DsValue::Auto));
        assert_eq!(ds.train_batch_size.unwrap().value(), None);
    }

    #[test]
    fn syntax_errors_give_line_and_column() {
        let e = DsConfig::parse("{\n  \"zero_optimization\": {\n    \"stage\": 3,\n  }\n}")
            .unwrap_err();
        match &e {
            DsConfigError::Syntax {
                line,
                column,
                message,
            } => {
                assert_eq!((*line, *column), (4, 3));
                assert!(message.contains("trailing comma"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            e.to_string()
                .starts_with("not valid JSON at line 4, column 3: "),
            "{e}"
        );
        assert!(matches!(
            DsConfig::parse(""),
            Err(DsConfigError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn type_errors_name_the_field_path() {
        let e = DsConfig::parse(r#"{"zero_optimization": {"stage": "three"}}"#).unwrap_err();
        match &e {
            DsConfigError::Field { path, message } => {
                assert_eq!(path, "zero_optimization.stage");
                assert!(message.contains("three"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        for (text, path) in [
            (r#"{"train_batch_size": "sixteen"}"#, "train_batch_size"),
            (r#"{"bf16": {"enabled": "yes"}}"#, "bf16.enabled"),
            (r#"{"fp16": {"loss_scale": "auto"}}"#, "fp16.loss_scale"),
            (
                r#"{"zero_optimization": {"offload_optimizer": {"device": "gpu"}}}"#,
                "zero_optimization.offload_optimizer.device",
            ),
            (
                r#"{"zero_optimization": {"offload_param": {"pin_memory": 1}}}"#,
                "zero_optimization.offload_param.pin_memory",
            ),
            (r#"{"zero_optimization": "3"}"#, "zero_optimization"),
        ] {
            match DsConfig::parse(text).unwrap_err() {
                DsConfigError::Field { path: p, .. } => assert_eq!(p, path, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        let e = DsConfig::parse(r#"{"zero_optimization": {"stage": 4}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "zero_optimization.stage: 4: Maximum supported ZeRO stage is 3"
        );
        assert!(DsConfig::parse(r#"{"zero_optimization": {"stage": -1}}"#).is_err());
        assert!(matches!(
            DsConfig::parse("[1]"),
            Err(DsConfigError::Field { .. })
        ));
    }

    #[test]
    fn legacy_forms() {
        let ds = DsConfig::parse(r#"{"zero_optimization": true, "bfloat16": {"enabled": true}}"#)
            .unwrap();
        assert_eq!(ds.zero_stage, Some(ZeroStage::Legacy(true)));
        assert_eq!(ds.effective_stage(), 1);
        assert_eq!(ds.bf16_enabled(), Some(DsValue::Value(true)));
        assert_eq!(ds.bf16_path(), "bfloat16.enabled");
        // `bf16` wins over the legacy key.
        let ds = DsConfig::parse(r#"{"bf16": {"enabled": false}, "bfloat16": {"enabled": true}}"#)
            .unwrap();
        assert_eq!(ds.bf16_enabled(), Some(DsValue::Value(false)));
        assert_eq!(ds.bf16_path(), "bf16.enabled");
    }

    #[test]
    fn unset_means_defaults_and_unknown_fields_are_tolerated() {
        let ds = DsConfig::parse(
            r#"{"wall_clock_breakdown": false, "zero_optimization": {"reduce_scatter": true}}"#,
        )
        .unwrap();
        assert_eq!(ds.zero_stage, None);
        assert_eq!(ds.effective_stage(), 0);
        assert_eq!(ds.bf16_enabled(), None);
        assert_eq!(ds.offload_param, None);
        assert_eq!(DsConfig::parse("{}").unwrap(), DsConfig::default());
    }
}

//! The training precision a framework is set to, and Lightning's precision strings.

/// Training precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Precision {
    Bf16,
    Fp16,
    Fp32,
    /// A value this kit does not map (e.g. `64-true`, `transformer-engine`), as written.
    Unknown(String),
}

impl Precision {
    /// Lightning precision strings (`trainer.precision`): `bf16-mixed`, `bf16-true` and the
    /// legacy `bf16`; `16-mixed`, `16-true` and the legacy `16`; `32-true`, `32`. Lightning 2.6.5
    /// `src/lightning/fabric/plugins/precision/precision.py` `_PRECISION_INPUT_STR` and its alias
    /// map (`bf16`→`bf16-mixed`, `16`→`16-mixed`, `32`→`32-true`), applied by
    /// `fabric/connector.py` `_convert_precision_to_unified_args`; NeMo v2.4.0
    /// `nemo/collections/nlp/parts/megatron_trainer_builder.py` `MegatronTrainerBuilder._plugins`
    /// takes `16`, `bf16`, `16-mixed`, `bf16-mixed` as mixed precision.
    pub fn from_lightning(s: &str) -> Precision {
        match s.trim() {
            "bf16" | "bf16-mixed" | "bf16-true" => Precision::Bf16,
            "16" | "16-mixed" | "16-true" => Precision::Fp16,
            "32" | "32-true" => Precision::Fp32,
            other => Precision::Unknown(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lightning_precision_strings() {
        for (s, p) in [
            ("bf16", Precision::Bf16),
            ("bf16-mixed", Precision::Bf16),
            ("bf16-true", Precision::Bf16),
            ("16", Precision::Fp16),
            ("16-mixed", Precision::Fp16),
            ("16-true", Precision::Fp16),
            ("32", Precision::Fp32),
            ("32-true", Precision::Fp32),
            ("64-true", Precision::Unknown("64-true".into())),
        ] {
            assert_eq!(Precision::from_lightning(s), p, "{s}");
        }
    }
}

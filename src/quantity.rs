//! Kubernetes quantities (`8`, `500m`, `1.5`, `64Gi`, `1e3`), exact and with checked arithmetic.
//!
//! Grammar (k8s.io/apimachinery `pkg/api/resource/quantity.go`, the comment on `Quantity`):
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! <signedNumber>    ::= <number> | <sign><number>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! ```
//! The suffix table (`suffix.go`, `interpret`) decides `E` alone is exa and `e`/`E` followed by
//! digits is an exponent; the exponent is a whole number (`strconv.ParseInt`).
//!
//! Why not the `kube_quantity` crate: it reads the number through `f64` (nom `double`, then
//! `Decimal::from_f64`), so `0.1` or a 17-digit count is not exact, and its `+`/`-` operators
//! panic on overflow instead of returning an error. This module keeps the value as an `i128` count
//! of nano-units, which holds every quantity trainlab accepts exactly.
//!
//! Deliberate differences from the Go parser, all on input no lab needs:
//! - Go keeps values beyond ±(2^63−1) for decimal forms and silently caps binary ones at 2^63−1
//!   (`8Ei`); trainlab refuses anything beyond ±(2^63−1) with [`QuantityError::TooLarge`].
//! - Go's scanner accepts a missing number (`Ki`, `.`, `-` parse as 0); the grammar does not, and
//!   neither does trainlab.
//! - More than [`MAX_DIGITS`] significant digits is refused rather than carried in a big decimal.
//!
//! Like Go, a non-zero value finer than a nano-unit rounds away from zero to 1n ("0.9n" → 1n).

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Nano-units per unit: the finest step a quantity keeps (`Nano` scale in quantity.go).
const NANO: i128 = 1_000_000_000;
/// The largest magnitude trainlab counts, in units: 2^63−1, the int64 range Kubernetes' own
/// accessors (`Value`, `MilliValue`) work in.
pub const MAX_UNITS: i64 = i64::MAX;
const MAX_NANOS: i128 = MAX_UNITS as i128 * NANO;
/// Significant digits of the number part (leading and trailing zeros aside) trainlab reads.
pub const MAX_DIGITS: usize = 30;

/// Why a quantity cannot be read or computed. Messages name the value and the limit in words.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QuantityError {
    #[error("an empty string is not a Kubernetes quantity")]
    Empty,
    #[error("`{value}` is not a Kubernetes quantity: {why}")]
    Malformed { value: String, why: String },
    #[error("`{value}` has an unknown suffix `{suffix}` (known: n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or e<exponent>)")]
    UnknownSuffix { value: String, suffix: String },
    #[error("`{value}` has more digits than trainlab reads (at most {max} significant digits)")]
    TooManyDigits { value: String, max: usize },
    #[error("`{value}` is larger than trainlab can count (at most {limit})")]
    TooLarge { value: String, limit: String },
    #[error("`{value}` is below the smallest value trainlab can count (at least {limit})")]
    TooSmall { value: String, limit: String },
    #[error("`{value}` is not a whole number; this resource is counted in whole units")]
    NotWhole { value: String },
    /// Where the quantity was found (`spec.containers[0].resources.limits[nvidia.com/gpu]`).
    #[error("{path}: {source}")]
    At {
        path: String,
        source: Box<QuantityError>,
    },
}

impl QuantityError {
    /// The same error, located at a field path.
    pub fn at(self, path: impl Into<String>) -> QuantityError {
        QuantityError::At {
            path: path.into(),
            source: Box::new(self),
        }
    }

    fn too_large(value: impl Into<String>, negative: bool) -> QuantityError {
        if negative {
            QuantityError::TooSmall {
                value: value.into(),
                limit: format!("-{MAX_UNITS}"),
            }
        } else {
            QuantityError::TooLarge {
                value: value.into(),
                limit: MAX_UNITS.to_string(),
            }
        }
    }
}

/// An exact quantity: a whole number of nano-units within ±(2^63−1) units, with the text it was
/// read from (for messages). Equality and order compare values: `1Ki` equals `1024`.
#[derive(Debug, Clone)]
pub struct Quantity {
    nanos: i128,
    text: String,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Self) -> bool {
        self.nanos == other.nanos
    }
}
impl Eq for Quantity {}
impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Quantity {
    fn cmp(&self, other: &Self) -> Ordering {
        self.nanos.cmp(&other.nanos)
    }
}
impl std::hash::Hash for Quantity {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.nanos.hash(state);
    }
}

impl fmt::Display for Quantity {
    /// The text as written, or the canonical form of a computed value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Quantity, QuantityError> {
        Quantity::parse(s)
    }
}

impl TryFrom<&k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    type Error = QuantityError;
    fn try_from(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Quantity, QuantityError> {
        Quantity::parse(&q.0)
    }
}

impl Quantity {
    pub fn zero() -> Quantity {
        Quantity::from_nanos_unchecked(0)
    }

    /// A whole count (`8` GPUs).
    pub fn from_count(n: i64) -> Quantity {
        Quantity::from_nanos_unchecked(i128::from(n) * NANO)
    }

    /// Milli-units (`500` → `500m`), e.g. millicores.
    pub fn from_millis(m: i64) -> Quantity {
        // |m| / 1000 ≤ 2^63−1 units: always in range.
        Quantity::from_nanos_unchecked(i128::from(m) * 1_000_000)
    }

    fn from_nanos_unchecked(nanos: i128) -> Quantity {
        Quantity {
            nanos,
            text: canonical(nanos),
        }
    }

    fn from_nanos(
        nanos: i128,
        described: impl FnOnce() -> String,
    ) -> Result<Quantity, QuantityError> {
        if nanos.unsigned_abs() > MAX_NANOS as u128 {
            return Err(QuantityError::too_large(described(), nanos < 0));
        }
        Ok(Quantity::from_nanos_unchecked(nanos))
    }

    /// Reads a quantity as the API server does (see the module comment for the grammar).
    pub fn parse(s: &str) -> Result<Quantity, QuantityError> {
        let nanos = parse_nanos(s)?;
        Ok(Quantity {
            nanos,
            text: s.to_string(),
        })
    }

    /// The value in nano-units, exactly.
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Whether the value is a whole number of units.
    pub fn is_whole(&self) -> bool {
        self.nanos % NANO == 0
    }

    /// The text as written (or the canonical form of a computed value).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// A count of whole units, for extended resources (`nvidia.com/gpu: 8`). A fraction is an
    /// error: the API server rejects a non-integer extended resource with "must be an integer"
    /// (`ValidateResourceQuantityValue`, pkg/apis/core/validation/validation.go, for every name
    /// `helper.IsIntegerResourceName` accepts, which includes all extended resources).
    pub fn count(&self) -> Result<i64, QuantityError> {
        if !self.is_whole() {
            return Err(QuantityError::NotWhole {
                value: self.text.clone(),
            });
        }
        // In range by construction: |nanos| ≤ MAX_NANOS.
        i64::try_from(self.nanos / NANO)
            .map_err(|_| QuantityError::too_large(&self.text, self.is_negative()))
    }

    /// Whole units rounded away from zero, as `Quantity.Value()` does ("rounded up to the nearest
    /// integer away from 0"); for memory this is bytes.
    pub fn value(&self) -> i64 {
        let units = div_away_from_zero(self.nanos, NANO);
        // |units| ≤ MAX_UNITS since |nanos| ≤ MAX_UNITS·NANO.
        i64::try_from(units).unwrap_or(if units < 0 { -MAX_UNITS } else { MAX_UNITS })
    }

    /// Bytes, for memory and storage (the same rounding as [`Quantity::value`]).
    pub fn bytes(&self) -> i64 {
        self.value()
    }

    /// Milli-units rounded away from zero, as `Quantity.MilliValue()` does; for cpu these are
    /// millicores. A value whose milli-units exceed 2^63−1 is an error, not a wrapped number.
    pub fn millis(&self) -> Result<i64, QuantityError> {
        let m = div_away_from_zero(self.nanos, 1_000_000);
        i64::try_from(m).map_err(|_| {
            if m < 0 {
                QuantityError::TooSmall {
                    value: format!("{} in milli-units", self.text),
                    limit: format!("-{MAX_UNITS}m"),
                }
            } else {
                QuantityError::TooLarge {
                    value: format!("{} in milli-units", self.text),
                    limit: format!("{MAX_UNITS}m"),
                }
            }
        })
    }

    /// `self + other`, or an error when the sum leaves trainlab's range.
    pub fn checked_add(&self, other: &Quantity) -> Result<Quantity, QuantityError> {
        // Both are within ±MAX_NANOS (< 2^94), so the i128 sum cannot overflow; the range check can fail.
        Quantity::from_nanos(self.nanos + other.nanos, || {
            format!("the sum of {} and {}", self.text, other.text)
        })
    }

    /// `self − other`, or an error when the difference leaves trainlab's range.
    pub fn checked_sub(&self, other: &Quantity) -> Result<Quantity, QuantityError> {
        Quantity::from_nanos(self.nanos - other.nanos, || {
            format!("{} minus {}", self.text, other.text)
        })
    }

    /// `self × n` (n replicas of a request), or an error when the product leaves the range.
    pub fn checked_mul(&self, n: i64) -> Result<Quantity, QuantityError> {
        let described = || format!("{} times {n}", self.text);
        let product = self
            .nanos
            .checked_mul(i128::from(n))
            .ok_or_else(|| QuantityError::too_large(described(), (self.nanos < 0) != (n < 0)))?;
        Quantity::from_nanos(product, described)
    }

    /// The sum of quantities (zero for none), failing on the first step that leaves the range.
    pub fn checked_sum<'a>(
        items: impl IntoIterator<Item = &'a Quantity>,
    ) -> Result<Quantity, QuantityError> {
        items
            .into_iter()
            .try_fold(Quantity::zero(), |acc, q| acc.checked_add(q))
    }

    /// The larger of two quantities (never fails: both are in range).
    pub fn max_of(self, other: Quantity) -> Quantity {
        if other > self {
            other
        } else {
            self
        }
    }
}

/// `n / d` rounded away from zero (`d > 0`).
fn div_away_from_zero(n: i128, d: i128) -> i128 {
    let q = n / d;
    if n % d == 0 {
        q
    } else if n < 0 {
        q - 1
    } else {
        q + 1
    }
}

/// The canonical text of a computed value: whole units, else the largest of m, u, n that is exact
/// (as the API server's DecimalSI canonical form: "1.5" is "1500m").
fn canonical(nanos: i128) -> String {
    if nanos % NANO == 0 {
        format!("{}", nanos / NANO)
    } else if nanos % 1_000_000 == 0 {
        format!("{}m", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!("{}u", nanos / 1_000)
    } else {
        format!("{nanos}n")
    }
}

/// How the suffix scales the number.
enum Scale {
    /// × 10^exp
    Decimal(i64),
    /// × 2^exp
    Binary(u32),
}

fn suffix_scale(value: &str, suffix: &str) -> Result<Scale, QuantityError> {
    // quantity.go / suffix.go: decimal SI, binary SI, then `e`/`E` followed by a signed integer.
    let s = match suffix {
        "n" => Scale::Decimal(-9),
        "u" => Scale::Decimal(-6),
        "m" => Scale::Decimal(-3),
        "" => Scale::Decimal(0),
        "k" => Scale::Decimal(3),
        "M" => Scale::Decimal(6),
        "G" => Scale::Decimal(9),
        "T" => Scale::Decimal(12),
        "P" => Scale::Decimal(15),
        "E" => Scale::Decimal(18),
        "Ki" => Scale::Binary(10),
        "Mi" => Scale::Binary(20),
        "Gi" => Scale::Binary(30),
        "Ti" => Scale::Binary(40),
        "Pi" => Scale::Binary(50),
        "Ei" => Scale::Binary(60),
        _ => {
            let exp = suffix
                .strip_prefix('e')
                .or_else(|| suffix.strip_prefix('E'))
                .filter(|e| !e.is_empty())
                .ok_or_else(|| QuantityError::UnknownSuffix {
                    value: value.to_string(),
                    suffix: suffix.to_string(),
                })?;
            Scale::Decimal(parse_exponent(value, suffix, exp)?)
        }
    };
    Ok(s)
}

/// A signed decimal exponent. Exponents beyond ±10000 are clamped: any non-zero number scaled
/// that far is out of range (or rounds to 1n), and zero stays zero.
fn parse_exponent(value: &str, suffix: &str, exp: &str) -> Result<i64, QuantityError> {
    let (negative, digits) = match exp.as_bytes().first() {
        Some(b'-') => (true, &exp[1..]),
        Some(b'+') => (false, &exp[1..]),
        _ => (false, exp),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::UnknownSuffix {
            value: value.to_string(),
            suffix: suffix.to_string(),
        });
    }
    let magnitude = digits.parse::<i64>().unwrap_or(i64::MAX).min(10_000);
    Ok(if negative { -magnitude } else { magnitude })
}

fn parse_nanos(s: &str) -> Result<i128, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Empty);
    }
    let malformed = |why: &str| QuantityError::Malformed {
        value: s.to_string(),
        why: why.to_string(),
    };
    let (negative, rest) = match s.as_bytes()[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let int_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (int_part, rest) = rest.split_at(int_end);
    let (frac_part, suffix) = match rest.strip_prefix('.') {
        Some(after) => {
            let end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            after.split_at(end)
        }
        None => ("", rest),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(malformed("it does not start with a number"));
    }
    let scale = suffix_scale(s, suffix)?;

    // Leading zeros of the whole part and trailing zeros of the fraction do not change the value.
    let int_part = int_part.trim_start_matches('0');
    let frac_part = frac_part.trim_end_matches('0');
    if int_part.len() + frac_part.len() > MAX_DIGITS {
        return Err(QuantityError::TooManyDigits {
            value: s.to_string(),
            max: MAX_DIGITS,
        });
    }
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return Ok(0);
    }
    // At most MAX_DIGITS (30) digits: below 10^30 < 2^100.
    let d: u128 = digits
        .parse()
        .map_err(|_| malformed("its digits cannot be read"))?;
    let frac_len = frac_part.len() as i64;
    let too_large = || QuantityError::too_large(s, negative);

    // value in nano-units = d × multiplier × 10^(9 − frac_len [+ decimal exponent])
    let (multiplier_log2, ten_exp) = match scale {
        Scale::Decimal(e) => (0u32, 9 - frac_len + e),
        Scale::Binary(e) => (e, 9 - frac_len),
    };
    let magnitude: u128 = if ten_exp >= 0 {
        let ten = u32::try_from(ten_exp)
            .ok()
            .and_then(|t| 10u128.checked_pow(t))
            .ok_or_else(too_large)?;
        d.checked_mul(1u128 << multiplier_log2)
            .and_then(|v| v.checked_mul(ten))
            .ok_or_else(too_large)?
    } else {
        let n = ten_exp.unsigned_abs();
        if n > 38 {
            // d < 10^30 and the binary multiplier only applies with n ≤ 21 (frac_len ≤ 30), so
            // the value is below one nano-unit: it rounds away from zero to 1n.
            1
        } else {
            // n ≤ 38, so 10^n fits in u128.
            let p = 10u128.pow(n as u32);
            let (q, r) = (d / p, d % p);
            let whole = q
                .checked_mul(1u128 << multiplier_log2)
                .ok_or_else(too_large)?;
            whole
                .checked_add(mul_pow2_div_ceil(r, multiplier_log2, p))
                .ok_or_else(too_large)?
        }
    };
    if magnitude > MAX_NANOS as u128 {
        return Err(too_large());
    }
    let nanos = magnitude as i128;
    Ok(if negative { -nanos } else { nanos })
}

/// ⌈r · 2^e / p⌉ for r < p, by binary long division (no intermediate exceeds 2p).
fn mul_pow2_div_ceil(r: u128, e: u32, p: u128) -> u128 {
    let (mut rem, mut quotient) = (r, 0u128);
    for _ in 0..e {
        rem <<= 1;
        quotient <<= 1;
        if rem >= p {
            rem -= p;
            quotient |= 1;
        }
    }
    quotient + u128::from(rem > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn nanos(s: &str) -> i128 {
        q(s).nanos()
    }

    #[test]
    fn plain_and_decimal_si_suffixes() {
        assert_eq!(nanos("0"), 0);
        assert_eq!(nanos("8"), 8 * NANO);
        assert_eq!(nanos("+8"), 8 * NANO);
        assert_eq!(nanos("500m"), NANO / 2);
        assert_eq!(nanos("250u"), 250_000);
        assert_eq!(nanos("7n"), 7);
        assert_eq!(nanos("2k"), 2_000 * NANO);
        assert_eq!(nanos("3M"), 3_000_000 * NANO);
        assert_eq!(nanos("1G"), 1_000_000_000 * NANO);
        assert_eq!(nanos("1T"), 10i128.pow(12) * NANO);
        assert_eq!(nanos("1P"), 10i128.pow(15) * NANO);
        assert_eq!(nanos("2E"), 2 * 10i128.pow(18) * NANO);
    }

    #[test]
    fn binary_si_suffixes() {
        assert_eq!(q("1Ki").bytes(), 1024);
        assert_eq!(q("8142364Ki").bytes(), 8_142_364 * 1024);
        assert_eq!(q("2Mi").bytes(), 2 << 20);
        assert_eq!(q("64Gi").bytes(), 64 << 30);
        assert_eq!(q("1Ti").bytes(), 1 << 40);
        assert_eq!(q("1Pi").bytes(), 1 << 50);
        assert_eq!(q("7Ei").bytes(), 7 << 60);
        assert_eq!(q("1.5Gi").bytes(), 3 << 29);
        assert_eq!(q("0.5Ki").bytes(), 512);
    }

    #[test]
    fn fractions_and_exponents_are_exact() {
        assert_eq!(nanos("0.5"), NANO / 2);
        assert_eq!(nanos(".5"), NANO / 2);
        assert_eq!(nanos("5."), 5 * NANO);
        assert_eq!(nanos("1.2345"), 1_234_500_000);
        assert_eq!(nanos("0.1"), NANO / 10);
        assert_eq!(nanos("1e3"), 1_000 * NANO);
        assert_eq!(nanos("1E3"), 1_000 * NANO);
        assert_eq!(nanos("12e+6"), 12_000_000 * NANO);
        assert_eq!(nanos("5e-3"), NANO / 200);
        assert_eq!(nanos("1.5e2"), 150 * NANO);
        // Zero padding changes nothing, and a zero with any scale is zero.
        assert_eq!(
            nanos("000012.500000000000000000000000000000000"),
            12_500_000_000
        );
        assert_eq!(nanos("0e99999999999999999999"), 0);
        assert_eq!(nanos("-0"), 0);
        // 17 significant digits survive (they would not through an f64).
        assert_eq!(q("9007199254740993").count(), Ok(9_007_199_254_740_993));
    }

    #[test]
    fn finer_than_nano_rounds_away_from_zero_like_the_api_server() {
        assert_eq!(nanos("0.9n"), 1);
        assert_eq!(nanos("1.1n"), 2);
        assert_eq!(nanos("-0.9n"), -1);
        assert_eq!(nanos("1e-30"), 1);
        assert_eq!(nanos("0.000000000000000000001Ki"), 1);
    }

    #[test]
    fn equal_values_compare_equal_across_forms() {
        assert_eq!(q("1Ki"), q("1024"));
        assert_eq!(q("1k"), q("1e3"));
        assert_eq!(q("0.5"), q("500m"));
        assert!(q("1Mi") > q("1M"));
        assert!(q("-1") < q("0"));
        assert_eq!(q("8").max_of(q("16")), q("16"));
    }

    #[test]
    fn count_accepts_only_whole_numbers() {
        assert_eq!(q("8").count(), Ok(8));
        assert_eq!(q("1k").count(), Ok(1000));
        assert_eq!(q("0").count(), Ok(0));
        assert_eq!(q("-2").count(), Ok(-2));
        assert_eq!(q("2000m").count(), Ok(2));
        let e = q("0.5").count().unwrap_err();
        assert_eq!(
            e,
            QuantityError::NotWhole {
                value: "0.5".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "`0.5` is not a whole number; this resource is counted in whole units"
        );
        assert!(q("1500m").count().is_err());
    }

    #[test]
    fn millis_and_values_round_away_from_zero() {
        assert_eq!(q("500m").millis(), Ok(500));
        assert_eq!(q("2").millis(), Ok(2000));
        assert_eq!(q("0.1m").millis(), Ok(1));
        assert_eq!(q("-0.1m").millis(), Ok(-1));
        assert_eq!(q("1.5").value(), 2);
        assert_eq!(q("-1.5").value(), -2);
        assert_eq!(q("100n").value(), 1);
        // Within range in units but not in milli-units: an error, never a wrapped number.
        let e = q("9000000000000000000").millis().unwrap_err();
        assert!(matches!(e, QuantityError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("9223372036854775807m"), "{e}");
    }

    #[test]
    fn the_largest_count_is_two_to_the_63_minus_one() {
        assert_eq!(q("9223372036854775807").count(), Ok(i64::MAX));
        assert_eq!(q("-9223372036854775807").count(), Ok(-i64::MAX));
        let e = Quantity::parse("9223372036854775808").unwrap_err();
        assert!(matches!(e, QuantityError::TooLarge { .. }));
    }

    #[test]
    fn too_large_names_the_value_and_the_limit() {
        let e = Quantity::parse("9999999999Gi").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`9999999999Gi` is larger than trainlab can count (at most 9223372036854775807)"
        );
        assert!(Quantity::parse("8Ei").is_err());
        assert!(Quantity::parse("1e19").is_err());
        assert!(Quantity::parse("1e400").is_err());
        assert!(Quantity::parse("10E").is_err());
        let e = Quantity::parse("-9999999999Gi").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`-9999999999Gi` is below the smallest value trainlab can count (at least -9223372036854775807)"
        );
    }

    #[test]
    fn malformed_quantities_are_typed_errors() {
        assert_eq!(Quantity::parse(""), Err(QuantityError::Empty));
        for bad in ["Ki", ".", "-", "abc", " 1", "1 ", "1..5", "--1"] {
            let e = Quantity::parse(bad).unwrap_err();
            assert!(
                matches!(
                    e,
                    QuantityError::Malformed { .. } | QuantityError::UnknownSuffix { .. }
                ),
                "{bad}: {e}"
            );
        }
        for (bad, suffix) in [
            ("2x", "x"),
            ("1K", "K"),
            ("1kb", "kb"),
            ("1e", "e"),
            ("1Gi2", "Gi2"),
        ] {
            assert_eq!(
                Quantity::parse(bad),
                Err(QuantityError::UnknownSuffix {
                    value: bad.into(),
                    suffix: suffix.into()
                }),
                "{bad}"
            );
        }
        assert!(Quantity::parse("1e1.5").is_err());
        let e = Quantity::parse("1234567890123456789012345678901").unwrap_err();
        assert_eq!(
            e,
            QuantityError::TooManyDigits {
                value: "1234567890123456789012345678901".into(),
                max: MAX_DIGITS
            }
        );
    }

    #[test]
    fn checked_arithmetic_reports_overflow() {
        let max = q("9223372036854775807");
        let one = q("1");
        let e = max.checked_add(&one).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`the sum of 9223372036854775807 and 1` is larger than trainlab can count (at most 9223372036854775807)"
        );
        assert_eq!(q("2").checked_add(&q("500m")).unwrap(), q("2.5"));
        assert_eq!(q("2").checked_add(&q("500m")).unwrap().to_string(), "2500m");
        assert_eq!(q("2").checked_sub(&q("3")).unwrap(), q("-1"));
        assert!(q("-9223372036854775807").checked_sub(&one).is_err());
        assert_eq!(q("8").checked_mul(4).unwrap(), q("32"));
        assert!(max.checked_mul(2).is_err());
        assert!(max.checked_mul(-2).is_err());
        assert!(q("1").checked_mul(i64::MIN).is_err());
        let parts = [q("1"), q("2"), q("3")];
        assert_eq!(Quantity::checked_sum(&parts).unwrap(), q("6"));
        assert_eq!(Quantity::checked_sum(&[]).unwrap(), Quantity::zero());
        assert!(Quantity::checked_sum(&[max.clone(), one.clone()]).is_err());
    }

    #[test]
    fn computed_values_print_in_canonical_form() {
        assert_eq!(Quantity::from_count(8).to_string(), "8");
        assert_eq!(Quantity::from_millis(1500).to_string(), "1500m");
        assert_eq!(
            q("0.5").checked_add(&Quantity::zero()).unwrap().to_string(),
            "500m"
        );
        assert_eq!(
            q("1u").checked_add(&Quantity::zero()).unwrap().to_string(),
            "1u"
        );
        assert_eq!(
            q("3n").checked_add(&Quantity::zero()).unwrap().to_string(),
            "3n"
        );
        // Parsed values keep the learner's text.
        assert_eq!(q("64Gi").to_string(), "64Gi");
    }

    #[test]
    fn errors_can_name_the_field() {
        let e = q("0.5")
            .count()
            .unwrap_err()
            .at("spec.containers[0].resources.limits[nvidia.com/gpu]");
        assert_eq!(
            e.to_string(),
            "spec.containers[0].resources.limits[nvidia.com/gpu]: `0.5` is not a whole number; this resource is counted in whole units"
        );
    }

    #[test]
    fn reads_k8s_openapi_quantities() {
        use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
        let k = K8sQuantity("32".into());
        assert_eq!(Quantity::try_from(&k).unwrap().count(), Ok(32));
        let bad = K8sQuantity("lots".into());
        assert!(Quantity::try_from(&bad).is_err());
    }

    /// Every short string over the grammar's characters parses or errors; none panics.
    #[test]
    fn no_input_panics() {
        let alphabet: Vec<char> = "09.+-eEiKkMmnuGTPx ".chars().collect();
        let mut words = vec![String::new()];
        for _ in 0..4 {
            let mut next = Vec::new();
            for w in &words {
                for c in &alphabet {
                    next.push(format!("{w}{c}"));
                }
            }
            for w in &next {
                if let Ok(q) = Quantity::parse(w) {
                    assert!(q.nanos().unsigned_abs() <= MAX_NANOS as u128, "{w}");
                    let _ = (q.count(), q.millis(), q.value());
                }
            }
            words = next;
        }
    }
}

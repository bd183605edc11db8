//! Tests of the value parsers.

use std::time::Duration;

use super::*;

#[test]
fn byte_counts_take_binary_suffixes() {
    assert_eq!(byte_count("512K"), Ok(512 << 10));
    assert_eq!(byte_count("7"), Ok(7));
    assert!(byte_count("99999999999G").is_err());
    assert!(byte_count("x").is_err());
}

#[test]
fn durations_never_panic_whatever_the_value() {
    assert_eq!(clamped_duration(f64::NAN), Duration::ZERO);
    assert_eq!(clamped_duration(-5.0), Duration::ZERO);
    assert_eq!(clamped_duration(1e300), Duration::from_secs(1_000_000_000));
    assert_eq!(clamped_duration(1.5), Duration::from_millis(1500));
    assert!(duration_from_secs(f64::INFINITY).is_err());
    assert!(duration_from_secs(1e9 + 1.0)
        .unwrap_err()
        .contains("limit of 1000000000 s"));
}

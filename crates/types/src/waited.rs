//! How long something waited, as people read it.

/// "2 h 5 min", "45 min", "30 s", "1 d 1 h" — `ms` milliseconds, rounded
/// down to the two largest units (a negative wait reads as "0 s").
pub fn waited_text(ms: i64) -> String {
    let secs = ms.max(0) / 1000;
    let (d, h, m) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{secs} s"),
        (0, 0, m) => format!("{m} min"),
        (0, h, 0) => format!("{h} h"),
        (0, h, m) => format!("{h} h {m} min"),
        (d, 0, _) => format!("{d} d"),
        (d, h, _) => format!("{d} d {h} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::waited_text;

    #[test]
    fn two_largest_units_rounded_down() {
        assert_eq!(waited_text(-5), "0 s");
        assert_eq!(waited_text(45_000), "45 s");
        assert_eq!(waited_text(59_999), "59 s");
        assert_eq!(waited_text(60_000), "1 min");
        assert_eq!(waited_text(3_600_000), "1 h");
        assert_eq!(waited_text(5_460_000), "1 h 31 min");
        assert_eq!(waited_text(86_400_000), "1 d");
        assert_eq!(waited_text(90_000_000), "1 d 1 h");
        assert_eq!(waited_text(90_060_000), "1 d 1 h");
    }
}

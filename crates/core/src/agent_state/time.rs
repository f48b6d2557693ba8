//! Reset times as the CLIs print them ("9:57am", "12:26pm (UTC)",
//! "9:54 AM"): a time of day, and the next instant it names.

/// When a usage limit lifts, as printed: the text and the time of day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResetTime {
    /// The words as the CLI printed them ("12:26pm (UTC)").
    pub text: String,
    /// Hour of the day, 0..=23.
    pub hour: u8,
    pub minute: u8,
    /// The zone the CLI named in parentheses ("UTC"), if any.
    pub zone: Option<String>,
}

impl ResetTime {
    /// The first time of day in `text` ("9:57am", "3pm", "9:54 AM",
    /// "21:05"), with a following "(Zone)".
    pub fn parse(text: &str) -> Option<Self> {
        let chars: Vec<char> = text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i].is_ascii_digit()
                && (i == 0 || !chars[i - 1].is_ascii_alphanumeric())
                && let Some(found) = parse_at(&chars, i)
            {
                return Some(found);
            }
            i += 1;
        }
        None
    }

    /// The next instant at or after `now` (less a minute: a time just
    /// printed is not tomorrow's) with this time of day, in the zone the CLI
    /// named or else `now`'s zone.
    pub fn next_after(&self, now: &jiff::ZonedDateTime) -> Option<jiff::ZonedDateTime> {
        let now = match self.zone.as_deref().map(jiff::tz::TimeZone::get) {
            Some(Ok(tz)) => now.with_time_zone(tz),
            _ => now.clone(),
        };
        let today = now
            .date()
            .at(self.hour as i8, self.minute as i8, 0, 0)
            .to_zoned_datetime(now.time_zone().clone())
            .ok()?;
        let slack = now.checked_sub(jiff::Span::new().minutes(1)).ok()?;
        if today >= slack {
            Some(today)
        } else {
            today.checked_add(jiff::Span::new().days(1)).ok()
        }
    }
}

fn parse_at(chars: &[char], start: usize) -> Option<ResetTime> {
    let mut i = start;
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < chars.len() && chars[*i].is_ascii_digit() {
            *i += 1;
        }
        chars[from..*i].iter().collect::<String>()
    };
    let hour: u32 = digits(&mut i).parse().ok()?;
    let mut minute = 0u32;
    let mut has_minutes = false;
    if chars.get(i) == Some(&':') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
        i += 1;
        let m = digits(&mut i);
        if m.len() != 2 {
            return None;
        }
        minute = m.parse().ok()?;
        has_minutes = true;
    }
    let mut j = i;
    if chars.get(j) == Some(&' ') {
        j += 1;
    }
    let word: String = chars[j..chars.len().min(j + 2)]
        .iter()
        .collect::<String>()
        .to_lowercase();
    let after_word = chars.get(j + 2).is_none_or(|c| !c.is_ascii_alphanumeric());
    let hour = if (word == "am" || word == "pm") && after_word {
        if !(1..=12).contains(&hour) {
            return None;
        }
        i = j + 2;
        (hour % 12) + if word == "pm" { 12 } else { 0 }
    } else if has_minutes && hour < 24 {
        hour
    } else {
        return None;
    };
    if minute > 59 {
        return None;
    }
    // "(UTC)" right after.
    let rest: String = chars[i..].iter().collect();
    let zone = rest
        .trim_start()
        .strip_prefix('(')
        .and_then(|r| r.split_once(')'))
        .map(|(z, _)| z.trim().to_string())
        .filter(|z| !z.is_empty() && !z.contains(' '));
    let end = match &zone {
        Some(_) => {
            i + rest
                .find(')')
                .map(|p| rest[..=p].chars().count())
                .unwrap_or(0)
        }
        None => i,
    };
    Some(ResetTime {
        text: chars[start..end]
            .iter()
            .collect::<String>()
            .trim()
            .to_string(),
        hour: hour as u8,
        minute: minute as u8,
        zone,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_as_the_clis_print_them() {
        let t = ResetTime::parse("resets 12:26pm (UTC)").unwrap();
        assert_eq!((t.hour, t.minute, t.zone.as_deref()), (12, 26, Some("UTC")));
        assert_eq!(t.text, "12:26pm (UTC)");
        let t = ResetTime::parse("try again at 9:54 AM.").unwrap();
        assert_eq!((t.hour, t.minute, t.zone), (9, 54, None));
        assert_eq!(t.text, "9:54 AM");
        let t = ResetTime::parse("retrying in 5s (12:00am)").unwrap();
        assert_eq!((t.hour, t.minute), (0, 0));
        assert_eq!(ResetTime::parse("resets 3pm").map(|t| t.hour), Some(15));
        assert_eq!(ResetTime::parse("at 21:05").map(|t| t.hour), Some(21));
        assert_eq!(ResetTime::parse("attempt 3/10 in 5s"), None);
        assert_eq!(ResetTime::parse("13pm"), None);
    }

    #[test]
    fn the_next_instant_is_today_or_tomorrow() {
        let now: jiff::ZonedDateTime = "2026-12-05T12:25:00[UTC]".parse().unwrap();
        let t = ResetTime::parse("12:26pm (UTC)").unwrap();
        assert_eq!(
            t.next_after(&now).unwrap().to_string(),
            "2026-12-05T12:26:00+00:00[UTC]"
        );
        let t = ResetTime::parse("9:57am").unwrap();
        assert_eq!(
            t.next_after(&now).unwrap().to_string(),
            "2026-12-06T09:57:00+00:00[UTC]"
        );
        // Printed a moment ago: still today.
        let t = ResetTime::parse("12:25pm").unwrap();
        let later: jiff::ZonedDateTime = "2026-12-05T12:25:30[UTC]".parse().unwrap();
        assert_eq!(t.next_after(&later).unwrap().date(), later.date());
    }
}

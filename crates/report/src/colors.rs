//! The colour of a binding: one per binding, the same in every plot and
//! table of a report and in every report, so that a reader who learnt
//! "udp is blue" in one figure reads every other figure by it.
//!
//! The bindings the tool knows have a colour each from a fixed table
//! (the Okabe–Ito colours and Paul Tol's muted ones: as far apart as
//! twelve colours can be for readers with a colour vision deficiency).
//! A binding the table does not know yet takes one of the reserve colours,
//! chosen by its name (stable across reports); a new binding belongs in
//! the table.
//!
//! Variants of one binding in one figure (transports, QoS, modes; sizes or
//! subscribers in a figure of one series) are shades of its colour
//! ([`shade`]): the first the colour itself, the next darker, then
//! lighter, further each time.

/// Each known binding and its colour (lower-case hex `#rrggbb`).
pub const BINDINGS: &[(&str, &str)] = &[
    ("udp", "#0072b2"),
    ("tcp", "#d55e00"),
    ("uds", "#009e73"),
    ("shm", "#cc79a7"),
    ("intra", "#e69f00"),
    ("mock", "#000000"),
    ("cyclonedds", "#332288"),
    ("fastdds", "#117733"),
    ("connext", "#882255"),
    ("iceoryx", "#56b4e9"),
    ("iceoryx2", "#ddcc77"),
    ("zenoh", "#ee6677"),
];

/// Colours of bindings the table does not name, by a hash of the name.
pub const RESERVE: &[&str] = &["#999933", "#aa3377", "#8c564b", "#44aa99"];

/// The colour of `binding`.
pub fn binding_color(binding: &str) -> &'static str {
    match BINDINGS.iter().find(|(b, _)| *b == binding) {
        Some((_, c)) => c,
        None => RESERVE[fnv1a(binding) as usize % RESERVE.len()],
    }
}

/// FNV-1a of `s`: a hash that stays the same across builds and platforms
/// (std's hasher promises neither).
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The `k`-th shade of `color` (`#rrggbb`): `k = 0` is the colour itself;
/// odd `k` mix it with black, even `k` with white, by 30 %, 45 %, 60 % and
/// 75 % as `k` grows (a colour too dark to darken, black, only lightens).
/// Shades repeat beyond the ninth (the fifth of a dark colour).
pub fn shade(color: &str, k: usize) -> String {
    if k == 0 {
        return color.to_string();
    }
    let Some(rgb) = parse(color) else {
        return color.to_string();
    };
    let dark = rgb.iter().map(|&c| u32::from(c)).sum::<u32>() < 160;
    let (toward, step) = match (dark, k % 2) {
        (true, _) => (255.0, k),
        (false, 1) => (0.0, k.div_ceil(2)),
        (false, _) => (255.0, k / 2),
    };
    let amount = (0.15 + 0.15 * step as f64).min(0.75);
    let mix = |c: u8| (f64::from(c) + (toward - f64::from(c)) * amount).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(rgb[0]), mix(rgb[1]), mix(rgb[2]))
}

fn parse(color: &str) -> Option<[u8; 3]> {
    let h = color.strip_prefix('#').filter(|h| h.len() == 6)?;
    let c = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
    Some([c(0)?, c(2)?, c(4)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_binding_has_its_own_colour() {
        let mut colours: Vec<&str> = BINDINGS.iter().map(|b| b.1).collect();
        colours.extend(RESERVE);
        let n = colours.len();
        colours.sort_unstable();
        colours.dedup();
        assert_eq!(colours.len(), n, "two bindings share a colour");
        assert_eq!(binding_color("zenoh"), "#ee6677");
        assert_eq!(binding_color("udp"), "#0072b2");
    }

    #[test]
    fn unknown_bindings_take_a_reserve_colour_by_name() {
        let c = binding_color("newmw");
        assert!(RESERVE.contains(&c));
        assert_eq!(c, binding_color("newmw"));
    }

    #[test]
    fn shades_differ_and_start_at_the_colour() {
        assert_eq!(shade("#0072b2", 0), "#0072b2");
        assert_eq!(shade("#0072b2", 1), "#00507d");
        assert_eq!(shade("#0072b2", 2), "#4d9cc9");
        let s: Vec<String> = (0..8).map(|k| shade("#0072b2", k)).collect();
        let mut d = s.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), s.len(), "{s:?}");
        // Black lightens.
        assert_eq!(shade("#000000", 1), "#4d4d4d");
        assert_eq!(shade("#000000", 2), "#737373");
    }
}

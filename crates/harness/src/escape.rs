//! Text from the network made safe to print: a stranger's version string
//! or message must not forge a log line, move the cursor or recolour the
//! terminal.

/// `s` with every character outside printable ASCII shown as a Rust escape
/// (`\n`, `\u{1b}`), cut to at most `max` characters (then `...`).
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push_str("...");
            break;
        }
        if c == ' ' || c.is_ascii_graphic() {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_and_long_text_are_defused() {
        assert_eq!(printable("0.1.0", 40), "0.1.0");
        assert_eq!(
            printable("x\npubsubperf agent: session 9 from 10.0.0.1", 12),
            "x\\npubsubperf..."
        );
        assert_eq!(printable("\u{1b}[31mred", 40), "\\u{1b}[31mred");
        assert_eq!(printable("é", 40), "\\u{e9}");
    }
}

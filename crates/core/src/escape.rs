//! Text from the network or from an imported results file made safe to
//! print: a stranger's version string, a message, or a label in a hostile
//! file must not forge a line, move the cursor, recolour the terminal or
//! reverse the text around it.

/// Whether `c` may not reach a terminal as it is: a control character
/// (C0, DEL, C1: newline, carriage return, ESC, BEL...) or an invisible
/// format character that reorders or hides text (bidirectional overrides
/// and isolates, zero-width characters, the byte-order mark).
fn unsafe_to_print(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

/// `s` with every character unsafe to print shown as a Rust escape (`\n`,
/// `\u{1b}`, `\u{202e}`), cut to at most `max` characters (then `...`).
/// Printable text, other languages' letters included, stays as it is.
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push_str("...");
            break;
        }
        if unsafe_to_print(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` with every character unsafe to print escaped, whatever its length:
/// stored text (labels, names, notes) printed in a table or a CSV field.
pub fn printable_all(s: &str) -> String {
    printable(s, usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::{printable, printable_all};

    #[test]
    fn control_characters_and_long_text_are_defused() {
        assert_eq!(printable("0.1.0", 40), "0.1.0");
        assert_eq!(
            printable("x\npubsubperf agent: session 9 from 10.0.0.1", 12),
            "x\\npubsubperf..."
        );
        assert_eq!(printable("\u{1b}[31mred", 40), "\\u{1b}[31mred");
        assert_eq!(
            printable("a\u{7}b\rc\u{9b}d\u{7f}", 40),
            "a\\u{7}b\\rc\\u{9b}d\\u{7f}"
        );
        assert_eq!(printable("abc\u{202e}fed", 40), "abc\\u{202e}fed");
        assert_eq!(printable("é µs Δ", 40), "é µs Δ");
        assert_eq!(printable_all(&"x".repeat(1000)).len(), 1000);
    }
}

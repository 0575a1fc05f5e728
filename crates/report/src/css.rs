//! The report's style sheet (inline in the page: the report works
//! offline). A table wider than its card (the latency table's nineteen
//! columns at a 1400 px window) scrolls inside the card: every table is a
//! block as wide as its content, at most its card, that scrolls sideways;
//! the cells of a table of figures do not wrap (a row stays one line).

/// The CSS of every report.
pub(crate) const CSS: &str = "
:root{color-scheme:light}
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:0;color:#222;background:#f6f7f9;line-height:1.45}
p.left-out{color:#555;font-size:13px}
p.warn{background:#fff3e0;border-left:4px solid #e65100;padding:6px 10px}
header{background:#1d2b3a;color:#fff;padding:18px 28px 10px}
header h1{margin:0 0 4px;font-size:24px}
header .meta{margin:0 0 10px;color:#c8d3de;font-size:13px}
nav a{color:#fff;margin-right:18px;font-size:14px;text-decoration:none;border-bottom:1px solid #6c8aa8}
main{max-width:1180px;margin:0 auto;padding:8px 20px 30px}
section{background:#fff;border:1px solid #dde2e7;border-radius:6px;margin:18px 0;padding:6px 20px 16px}
h2{font-size:20px;border-bottom:2px solid #1d2b3a;padding-bottom:4px}
figure{margin:14px 0 22px}
figure svg{max-width:100%;height:auto;display:block;margin:0 auto}
figcaption{font-size:13px;color:#555;margin:4px 10px 0;text-align:center}
table{border-collapse:collapse;margin:12px 0;font-size:13px;display:block;width:max-content;max-width:100%;overflow-x:auto}
caption{text-align:left;font-weight:bold;padding:4px 0;color:#1d2b3a}
th,td{border:1px solid #dde2e7;padding:3px 8px}
thead th{background:#eef1f4}
table.num td{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.num td:first-child{text-align:left}
table.kv th{text-align:left;background:#f4f6f8;font-weight:normal;color:#444}
tbody tr:nth-child(even){background:#fafbfc}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.scroll{overflow-x:auto}
footer{max-width:1180px;margin:0 auto 30px;padding:0 20px;font-size:12px;color:#666}
";

#[cfg(test)]
mod tests {
    use super::CSS;

    /// The declarations of the rule for `selector`.
    fn rule(selector: &str) -> Vec<&'static str> {
        let at = CSS
            .find(&format!("\n{selector}{{"))
            .unwrap_or_else(|| panic!("no rule for {selector}"));
        let body = &CSS[at + selector.len() + 2..];
        body[..body.find('}').unwrap()].split(';').collect()
    }

    #[test]
    fn wide_tables_scroll_inside_their_card() {
        let table = rule("table");
        for d in [
            "display:block",
            "max-width:100%",
            "overflow-x:auto",
            "width:max-content",
        ] {
            assert!(table.contains(&d), "table{{{}}} lacks {d}", table.join(";"));
        }
        assert!(rule("table.num td").contains(&"white-space:nowrap"));
    }
}

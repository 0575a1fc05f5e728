//! A sweep matrix's `load` axis (`--load` profiles): each cell of the
//! other axes once per profile.

use super::{Cell, command_line, fnv1a, set};

/// Each cell once per `load` profile (`none`: no `--load`), the profile in
/// its key; the cells as they are without the axis.
pub(super) fn with_load_axis(cells: Vec<Cell>, loads: &[String]) -> Vec<Cell> {
    if loads.is_empty() {
        return cells;
    }
    let mut out = Vec::new();
    for c in cells {
        for l in loads {
            let mut c = c.clone();
            c.key = format!("{}/load={l}", c.key);
            if l != "none" {
                c.options.push(set("load", l.clone()));
            }
            c.digest = fnv1a(&command_line(&c.test, &c.options));
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::parse;

    #[test]
    fn a_load_axis_runs_each_cell_under_each_profile() {
        let s = parse(
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\nload = [\"none\", \"cpu\"]\n",
            "x",
        )
        .unwrap();
        let keys: Vec<&str> = s.cells.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "latency/udp/transport=default/size=64/load=none",
                "latency/udp/transport=default/size=64/load=cpu"
            ]
        );
        assert!(!s.cells[0].args().contains(&"--load".to_string()));
        assert!(
            s.cells[1]
                .args()
                .ends_with(&["--load".to_string(), "cpu".to_string()])
        );
        assert_ne!(s.cells[0].digest, s.cells[1].digest);
        let e = parse(
            "[matrix]\nbindings = [\"udp\"]\nsizes = [64]\n[settings]\nload = \"cpu\"\n",
            "x",
        )
        .unwrap_err();
        assert!(e.contains("settings.load: set by the matrix"), "{e}");
    }
}

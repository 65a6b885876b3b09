//! The walk's arithmetic: which units of leaves a run of blocks touches.

use super::*;

#[test]
fn touched_units_wrap_round() {
    assert_eq!(touched_units(0, 3, 8, &(0..8), 1), [0..3, 0..0]);
    assert_eq!(touched_units(6, 9, 8, &(0..8), 1), [6..8, 0..1]);
    assert_eq!(touched_units(13, 16, 8, &(0..8), 1), [5..8, 0..0]);
    assert_eq!(touched_units(5, 13, 8, &(0..8), 1), [0..8, 0..0]);
    assert_eq!(touched_units(5, 105, 8, &(0..8), 1), [0..8, 0..0]);
    // Units of four leaves; L = 10 ends in a half unit.
    assert_eq!(touched_units(0, 3, 10, &(0..10), 4), [0..1, 0..0]);
    assert_eq!(touched_units(5, 9, 10, &(0..10), 4), [1..3, 0..0]);
    assert_eq!(touched_units(9, 13, 10, &(0..10), 4), [2..3, 0..1]);
    // The wrap ends in the unit where it started: every unit, once.
    assert_eq!(touched_units(6, 15, 8, &(0..8), 4), [0..2, 0..0]);
    assert_eq!(touched_units(17, 25, 9, &(0..9), 4), [2..3, 0..2]);
    // Leaves 3 … 9 of 10, units of four from leaf 3.
    let own = 3..10;
    assert_eq!(touched_units(0, 3, 10, &own, 4), [0..0, 0..0]);
    assert_eq!(touched_units(0, 5, 10, &own, 4), [0..1, 0..0]);
    assert_eq!(touched_units(5, 9, 10, &own, 4), [0..2, 0..0]);
    assert_eq!(touched_units(8, 14, 10, &own, 4), [1..2, 0..1]);
    assert_eq!(touched_units(8, 12, 10, &own, 4), [1..2, 0..0]);
    assert_eq!(touched_units(5, 14, 10, &own, 4), [0..2, 0..0]);
    assert_eq!(touched_units(2, 200, 10, &own, 4), [0..2, 0..0]);
    // Leaves 2 … 8: units 0 (leaves 2 … 5) and 1 (6 … 8). A wrap that
    // ends in the unit where it started is one range.
    assert_eq!(touched_units(16, 24, 10, &(2..9), 4), [1..2, 0..1]);
    assert_eq!(touched_units(15, 23, 10, &(2..9), 4), [0..2, 0..0]);
    assert_eq!(touched_units(1, 2, 10, &(4..4), 4), [0..0, 0..0]);
}

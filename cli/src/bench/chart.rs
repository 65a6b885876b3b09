//! A bench's report as an SVG chart: throughput against height, one line
//! per backend and LI function, each point's bar spanning its slowest to
//! fastest run; each standard function a dashed flat line at its median,
//! labelled with its name and backend, and the sha3 crate's reference a
//! flat black line. The y axis is logarithmic, labelled at [`log_ticks`].

use std::path::Path;

use super::{Measurement, Report, Row, rate};

/// Writes the chart of `r` to `path` (a backend that could not start has
/// no line), as [`treehash::output_file::write`] writes every file.
pub fn plot_svg(r: &Report, path: &Path) -> Result<(), String> {
    use plotters::prelude::*;
    let measured: Vec<(&Row, &Measurement)> = r
        .rows
        .iter()
        .filter_map(|row| row.measured.as_ref().map(|m| (row, m)))
        .collect();
    if measured.is_empty() || r.bytes == 0 {
        return Err("nothing was measured".into());
    }
    // Every rate drawn: each run's slowest and fastest.
    let spreads = measured
        .iter()
        .map(|(_, m)| m.seconds)
        .chain(r.sha3_crate.iter().map(|p| p.seconds));
    let (lo, hi) = spreads.fold((f64::MAX, f64::MIN), |(lo, hi), t| {
        (lo.min(rate(r.bytes, t.max)), hi.max(rate(r.bytes, t.min)))
    });
    let ticks = log_ticks(lo, hi);
    let (bottom, top) = (ticks[0], ticks[ticks.len() - 1]);
    // The LI rows' heights; a chart of standard functions alone spans H = 0.
    let heights: Vec<u32> = r.rows.iter().filter_map(|row| row.height).collect();
    let h_min = heights.iter().copied().min().unwrap_or(0);
    let h_max = heights.iter().copied().max().unwrap_or(0);
    let (x_lo, x_hi) = (h_min as f64 - 0.2, h_max as f64 + 0.2);
    // One series per backend and function, in the rows' order.
    let mut series: Vec<(&str, &str)> = Vec::new();
    for (row, _) in &measured {
        let key = (row.backend.as_str(), row.function.as_str());
        if !series.contains(&key) {
            series.push(key);
        }
    }
    let entries = series.len() + usize::from(r.sha3_crate.is_some());
    // The legend has a panel of its own, right of the plot, one line an
    // entry: it never hides a line, however many functions are measured.
    let height = (LEGEND_TOP + LEGEND_LINE * entries as u32 + 40).max(CHART_SIZE.1);
    // Drawn into memory, then written: plotters drops a write error of its
    // own file (a small chart fails only when its buffer is flushed on drop).
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, (CHART_SIZE.0 + LEGEND_WIDTH, height))
        .into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| e.to_string();
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let (plot_area, legend_area) = root.split_horizontally(CHART_SIZE.0);
    let plot_area = plot_area.shrink((0, 0), (CHART_SIZE.0, CHART_SIZE.1));
    let subject = if r.is_list() {
        format!("{} files, {:.1} MB in all", r.files, r.bytes as f64 / 1e6)
    } else {
        format!("{:.1} MB file", r.bytes as f64 / 1e6)
    };
    let degree = r.degree.map(|d| format!(", D={d}")).unwrap_or_default();
    // The functions are named in the title while they fit; the legend
    // names each line.
    let names: Vec<&str> = r.functions.iter().map(|f| f.name.as_str()).collect();
    let functions = match names.len() {
        0..=2 => names.join(", "),
        n => format!("{n} functions"),
    };
    let caption = format!("treehash {functions} throughput, {subject}{degree}");
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(caption, ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(x_lo..x_hi, (bottom..top).log_scale().with_key_points(ticks))
        .map_err(|e| draw(&e))?;
    let trees = !heights.is_empty();
    chart
        .configure_mesh()
        .x_desc(match trees {
            true => "tree height H (leaves = D^H)",
            false => "(a standard function has no height)",
        })
        .y_desc("throughput, GB/s (log scale; bars: slowest to fastest run)")
        .x_labels(if trees {
            (h_max - h_min + 1) as usize
        } else {
            0
        })
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| tick_label(*y))
        .draw()
        .map_err(|e| draw(&e))?;
    let several_trees = r.functions.iter().filter(|f| f.is_tree()).count() > 1;
    let mut legend: Vec<LegendEntry> = Vec::new();
    for (i, &(backend, function)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Past the palette, the marks tell lines of one colour apart.
        let square = (i / PALETTE.len()) % 2 == 1;
        let rows: Vec<&(&Row, &Measurement)> = measured
            .iter()
            .filter(|(row, _)| row.backend == backend && row.function == function)
            .collect();
        let tree = rows.iter().all(|(row, _)| row.height.is_some());
        if !tree {
            // A standard function: its median across the axis.
            let gb_per_s = rows[0].1.gb_per_s;
            let line = vec![(x_lo, gb_per_s), (x_hi, gb_per_s)];
            chart
                .draw_series(DashedLineSeries::new(line, 8, 5, color.stroke_width(2)))
                .map_err(|e| draw(&e))?;
            legend.push(LegendEntry {
                label: format!("{function} on {backend}"),
                color,
                dashed: true,
                mark: None,
            });
            continue;
        }
        let points: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|(row, m)| Some((f64::from(row.height?), m.gb_per_s)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
            .map_err(|e| draw(&e))?;
        if square {
            chart.draw_series(
                points.into_iter().map(|p| {
                    EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], color.filled())
                }),
            )
        } else {
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 4, color.filled())),
            )
        }
        .map_err(|e| draw(&e))?;
        chart
            .draw_series(rows.iter().filter_map(|(row, m)| {
                let h = f64::from(row.height?);
                Some(PathElement::new(
                    vec![
                        (h, rate(r.bytes, m.seconds.max)),
                        (h, rate(r.bytes, m.seconds.min)),
                    ],
                    color.stroke_width(1),
                ))
            }))
            .map_err(|e| draw(&e))?;
        legend.push(LegendEntry {
            label: match several_trees {
                true => format!("{backend} {function}"),
                false => backend.to_string(),
            },
            color,
            dashed: false,
            mark: Some(square),
        });
    }
    if let Some(p) = &r.sha3_crate {
        let line = vec![(h_min as f64, p.gb_per_s), (h_max as f64, p.gb_per_s)];
        chart
            .draw_series(LineSeries::new(line, BLACK.stroke_width(1)))
            .map_err(|e| draw(&e))?;
        legend.push(LegendEntry {
            label: format!("reference: plain {} by the sha3 crate, 1 thread", p.label),
            color: BLACK,
            dashed: false,
            mark: None,
        });
    }
    draw_legend(&legend_area, &legend).map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))?;
    drop(chart);
    drop((plot_area, legend_area, root));
    let access = treehash::output_file::Access::Shared;
    treehash::output_file::write(path, svg.as_bytes(), access)
        .map_err(|e| treehash::error::io_reason(&e))
}

/// The plot's size in pixels; the legend's panel is beside it, and the
/// canvas grows downwards where the legend needs more lines.
const CHART_SIZE: (u32, u32) = (900, 560);
/// The legend panel's width, its first line's height and each line's.
const LEGEND_WIDTH: u32 = 330;
const LEGEND_TOP: u32 = 60;
const LEGEND_LINE: u32 = 22;

/// Ten colours told apart also by most colour-blind readers (Tableau 10).
const PALETTE: [plotters::style::RGBColor; 10] = {
    use plotters::style::RGBColor;
    [
        RGBColor(0x4e, 0x79, 0xa7),
        RGBColor(0xf2, 0x8e, 0x2b),
        RGBColor(0xe1, 0x57, 0x59),
        RGBColor(0x76, 0xb7, 0xb2),
        RGBColor(0x59, 0xa1, 0x4f),
        RGBColor(0xed, 0xc9, 0x48),
        RGBColor(0xb0, 0x7a, 0xa1),
        RGBColor(0xff, 0x9d, 0xa7),
        RGBColor(0x9c, 0x75, 0x5f),
        RGBColor(0x79, 0x70, 0x6e),
    ]
};

/// One line of the legend: a sample of the series' line (dashed for a
/// standard function's median, with its mark for an LI line: a circle, or
/// a square past the palette) and its label.
struct LegendEntry {
    label: String,
    color: plotters::style::RGBColor,
    dashed: bool,
    mark: Option<bool>,
}

/// Draws the legend's entries down its panel, as the lines are drawn.
fn draw_legend<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    entries: &[LegendEntry],
) -> Result<(), plotters::drawing::DrawingAreaErrorKind<DB::ErrorType>> {
    use plotters::prelude::*;
    for (k, entry) in entries.iter().enumerate() {
        let y = (LEGEND_TOP + LEGEND_LINE * k as u32) as i32;
        let style = entry.color.stroke_width(2);
        if entry.dashed {
            for x in [0, 12, 24] {
                area.draw(&PathElement::new(vec![(x, y), (x + 7, y)], style))?;
            }
        } else {
            area.draw(&PathElement::new(vec![(0, y), (30, y)], style))?;
        }
        match entry.mark {
            Some(false) => area.draw(&Circle::new((15, y), 4, entry.color.filled()))?,
            Some(true) => area.draw(&Rectangle::new(
                [(11, y - 4), (19, y + 4)],
                entry.color.filled(),
            ))?,
            None => {}
        }
        area.draw(&Text::new(
            entry.label.clone(),
            (40, y - 7),
            ("sans-serif", 14),
        ))?;
    }
    Ok(())
}

/// The most labelled ticks on the chart's y axis.
const MAX_TICKS: usize = 12;

/// Mantissas of the ticks in each decade, finest first: the finest that
/// keeps the axis within [`MAX_TICKS`] is used.
const TICK_MANTISSAS: [&[f64]; 4] = [
    &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
    &[1.0, 2.0, 3.0, 5.0],
    &[1.0, 2.0, 5.0],
    &[1.0],
];

/// The labelled ticks of a log axis that shows `lo..=hi` (both above 0):
/// the first lies below `lo` and the last above `hi`, so that they are the
/// axis's ends and every value drawn lies between two labelled ticks (at
/// most 10 × apart, and at most 2.5 × apart where the range allows).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Room between the outermost value and the axis's end.
    const MARGIN: f64 = 1.05;
    let (first, last) = (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
    let mut ticks = Vec::new();
    for mantissas in TICK_MANTISSAS {
        let candidates: Vec<f64> = (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .collect();
        let start = candidates
            .iter()
            .rposition(|&t| t < lo / MARGIN)
            .unwrap_or(0);
        let end = candidates
            .iter()
            .position(|&t| t > hi * MARGIN)
            .unwrap_or(candidates.len() - 1);
        ticks = candidates[start..=end].to_vec();
        if ticks.len() <= MAX_TICKS {
            break;
        }
    }
    ticks
}

/// A tick's label: its one or two significant digits (`0.15`, `2`, `40`).
fn tick_label(y: f64) -> String {
    let decimals = (1 - y.log10().floor() as i32).max(0) as usize;
    let text = format!("{y:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio of the widest gap between neighbouring ticks.
    fn widest_gap(ticks: &[f64]) -> f64 {
        ticks.windows(2).map(|w| w[1] / w[0]).fold(0.0, f64::max)
    }

    #[test]
    fn log_ticks_frame_every_value_and_stay_few() {
        // The chart: 0.345 GB/s (the sha3 crate) to about 5 GB/s.
        for (lo, hi) in [
            (0.345, 5.0),
            (2.6, 2.7),
            (1.0, 1.0),
            (0.01, 500.0),
            (1e-4, 1e4),
            (40.0, 60.0),
            (0.469, 0.469),
        ] {
            let ticks = log_ticks(lo, hi);
            assert!(
                ticks.len() >= 2 && ticks.len() <= MAX_TICKS,
                "{lo} {hi}: {ticks:?}"
            );
            assert!(ticks.windows(2).all(|w| w[0] < w[1]), "{ticks:?}");
            assert!(
                ticks[0] < lo && hi < ticks[ticks.len() - 1],
                "{lo} {hi}: {ticks:?}"
            );
            assert!(widest_gap(&ticks) <= 10.0 + 1e-9, "{ticks:?}");
            if hi / lo < 100.0 {
                assert!(widest_gap(&ticks) <= 2.5 + 1e-9, "{lo} {hi}: {ticks:?}");
            }
        }
        let labels: Vec<String> = log_ticks(0.345, 5.0).into_iter().map(tick_label).collect();
        assert_eq!(
            labels,
            [
                "0.3", "0.4", "0.5", "0.6", "0.8", "1", "1.5", "2", "3", "4", "5", "6"
            ]
        );
    }

    #[test]
    fn tick_labels_show_one_or_two_significant_digits() {
        for (y, label) in [
            (0.15, "0.15"),
            (0.1 * 3.0, "0.3"),
            (1.0, "1"),
            (1.5, "1.5"),
            (2.0, "2"),
            (40.0, "40"),
            (1500.0, "1500"),
            (0.0005, "0.0005"),
        ] {
            assert_eq!(tick_label(y), label);
        }
    }
}

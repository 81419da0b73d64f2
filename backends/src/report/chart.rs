//! The SVG chart of non-terminating tests per device and mapping, after the
//! paper's Fig. 12: for each device, for each mapping, one bar for the tests
//! that hung in every run (deterministic) and one for those that hung only
//! in some (occasional), on a logarithmic axis because the counts range
//! from one to hundreds.
//!
//! Hand-written SVG with coordinates rounded to one decimal, so the same
//! report always gives the same bytes.

use crate::excerpt::markup;
use crate::mapping::Mapping;
use crate::report::analysis::{DeviceReport, Report};
use std::fmt::Write;

const BAR: f64 = 9.0;
const GAP: f64 = 3.0;
const GROUP_GAP: f64 = 22.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 40.0;
const PLOT_H: f64 = 260.0;
/// Room below the axis for device labels at least this tall; longer names
/// get more (see [`label_height`]).
const LABEL_H: f64 = 170.0;
/// Horizontal room per legend entry (the longest is `round-robin, some runs`).
const LEGEND_W: f64 = 150.0;

/// The height the device labels need: they are rotated by 60 degrees, at
/// about 6.2 px per character of the 11 px sans-serif font, so the legend
/// below them never overprints a long name.
fn label_height(report: &Report) -> f64 {
    let longest = report
        .devices
        .iter()
        .map(|d| crate::excerpt::printable(&d.device).chars().count())
        .max()
        .unwrap_or(0) as f64;
    (longest * 6.2 * 0.87 + 20.0).max(LABEL_H)
}

/// Fill colours per mapping (plain, round-robin, chunked); occasional bars
/// use the same colour, lighter.
const COLOURS: [(&str, &str); 3] = [
    ("#1f77b4", "#aec7e8"),
    ("#d62728", "#ff9896"),
    ("#2ca02c", "#98df8a"),
];

/// The logarithmic vertical axis: `decades` powers of ten, from 1 up to
/// the first at or above the largest count.
struct Scale {
    decades: u32,
    /// The log10 height of the top of the axis.
    top: f64,
}

impl Scale {
    /// The scale that fits every count of `report`.
    fn new(report: &Report) -> Scale {
        let max = report
            .devices
            .iter()
            .flat_map(|d| d.nonterm.iter())
            .map(|n| n.deterministic.max(n.occasional))
            .max()
            .unwrap_or(1)
            .max(1);
        let mut decades = 1u32;
        while 10f64.powi(decades as i32) < max as f64 {
            decades += 1;
        }
        let top = (10f64.powi(decades as i32) + 1.0).log10();
        Scale { decades, top }
    }

    /// The y coordinate of a count: log10(count + 1) so that 1 has a
    /// visible bar and 0 none, scaled so the top decade fills the plot.
    fn y(&self, count: f64) -> f64 {
        TOP + PLOT_H - PLOT_H * (count + 1.0).log10() / self.top
    }
}

/// The chart for every device of `report`.
pub fn svg(report: &Report) -> String {
    let scale = Scale::new(report);
    let group_w = 6.0 * BAR + 5.0 * GAP;
    let width = (LEFT + report.devices.len() as f64 * (group_w + GROUP_GAP) + 20.0)
        .max(LEFT + 6.0 * LEGEND_W + 20.0);
    let height = TOP + PLOT_H + label_height(report) + 50.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.1}\" height=\"{height:.1}\" viewBox=\"0 0 {width:.1} {height:.1}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    let _ = writeln!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{width:.1}\" height=\"{height:.1}\" fill=\"white\"/>"
    );
    let _ = writeln!(
        s,
        "<text x=\"{LEFT:.1}\" y=\"20.0\" font-size=\"13\">Tests that did not always terminate, per device and mapping (log scale)</text>"
    );
    axes(&mut s, &scale, width);
    for (g, d) in report.devices.iter().enumerate() {
        let x0 = LEFT + GROUP_GAP / 2.0 + g as f64 * (group_w + GROUP_GAP);
        device_group(&mut s, &scale, d, x0, group_w);
    }
    legend(&mut s, height);
    s.push_str("</svg>\n");
    s
}

/// The two axes and a grid line with its label at each decade, drawn
/// before the bars so that the bars cover the grid.
fn axes(s: &mut String, scale: &Scale, width: f64) {
    for k in 0..=scale.decades {
        let v = 10f64.powi(k as i32);
        let yy = scale.y(v);
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT:.1}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#dddddd\"/>",
            width - 10.0
        );
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            yy + 4.0,
            v as u64
        );
    }
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT:.1}\" y1=\"{TOP:.1}\" x2=\"{LEFT:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
        TOP + PLOT_H
    );
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>",
        TOP + PLOT_H,
        width - 10.0,
        TOP + PLOT_H
    );
}

/// One device's group of bars starting at `x0`: per mapping run, a bar
/// (with its count above it and a tooltip) for the deterministic and one
/// for the occasional non-terminating tests, and the device's name below,
/// rotated.
fn device_group(s: &mut String, scale: &Scale, d: &DeviceReport, x0: f64, group_w: f64) {
    for m in Mapping::ALL {
        let n = d.nonterm[m.code() as usize];
        for (j, (count, colour)) in [
            (n.deterministic, COLOURS[m.code() as usize].0),
            (n.occasional, COLOURS[m.code() as usize].1),
        ]
        .into_iter()
        .enumerate()
        {
            let x = x0 + (2 * m.code() as usize + j) as f64 * (BAR + GAP);
            let kind = if j == 0 {
                "deterministic"
            } else {
                "occasional"
            };
            if n.run == 0 {
                continue;
            }
            let yy = scale.y(count as f64);
            let h = TOP + PLOT_H - yy;
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{yy:.1}\" width=\"{BAR:.1}\" height=\"{h:.1}\" fill=\"{colour}\"><title>{}: {} {kind}: {count} tests</title></rect>",
                markup(&d.device),
                m.name()
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"8\" text-anchor=\"middle\">{count}</text>",
                x + BAR / 2.0,
                yy - 3.0
            );
        }
    }
    let lx = x0 + group_w / 2.0;
    let ly = TOP + PLOT_H + 10.0;
    let _ = writeln!(
        s,
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"end\" transform=\"rotate(-60 {lx:.1} {ly:.1})\">{}</text>",
        markup(&d.device)
    );
}

/// The legend along the bottom of a chart `height` tall: a swatch and a
/// name for each mapping's all-runs and some-runs colour.
fn legend(s: &mut String, height: f64) {
    let ly = height - 24.0;
    let mut lx = LEFT;
    for m in Mapping::ALL {
        for (j, kind) in ["all runs", "some runs"].iter().enumerate() {
            let c = if j == 0 {
                COLOURS[m.code() as usize].0
            } else {
                COLOURS[m.code() as usize].1
            };
            let _ = writeln!(
                s,
                "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"10.0\" height=\"10.0\" fill=\"{c}\"/>",
                ly - 9.0
            );
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{ly:.1}\">{}, {kind}</text>",
                lx + 14.0,
                m.name()
            );
            lx += LEGEND_W;
        }
    }
}

//! Plots a person can look at: grouped bar charts and line charts, written as SVG.
//!
//! An experiment describes its plots as data ([`Plot`]); the report writer draws them next to
//! the JSON. Line charts may use a logarithmic x axis (table sizes); it is drawn by plotting
//! log10(x) and labelling ticks with the original values.

use std::path::Path;

use plotters::prelude::*;

/// Colours of successive series (nexthop first).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// The shape of a plot.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// Bars: one group per label on the x axis, one bar per series inside each group.
    Bars {
        /// Group labels.
        groups: Vec<String>,
        /// (series name, one value per group; NaN = no bar).
        series: Vec<(String, Vec<f64>)>,
    },
    /// Lines through points.
    Lines {
        /// x axis label.
        x_label: String,
        /// Logarithmic x axis.
        log_x: bool,
        /// (series name, points).
        series: Vec<(String, Vec<(f64, f64)>)>,
    },
}

/// One plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// Short tag for the file name of second and later plots (`<stem>-<tag>.svg`).
    pub file_tag: String,
    /// Title.
    pub title: String,
    /// y axis label.
    pub y_label: String,
    /// The data.
    pub chart: Chart,
}

impl Plot {
    /// Draws the plot as an SVG file.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn draw(&self, path: &Path) -> anyhow::Result<()> {
        let root = SVGBackend::new(path, (1100, 620)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        match &self.chart {
            Chart::Bars { groups, series } => self.draw_bars(&root, groups, series)?,
            Chart::Lines { x_label, log_x, series } => self.draw_lines(&root, x_label, *log_x, series)?,
        }
        root.present().map_err(err)?;
        Ok(())
    }

    /// The titled frame both chart kinds draw in: x over `x`, y from 0 to `y_max`.
    fn frame<'a, 'b>(&self, root: &'a Area<'b>, x: std::ops::Range<f64>, y_max: f64) -> anyhow::Result<Frame<'a, 'b>> {
        ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(70)
            .build_cartesian_2d(x, 0f64..y_max)
            .map_err(err)
    }

    fn draw_bars(&self, root: &Area<'_>, groups: &[String], series: &[(String, Vec<f64>)]) -> anyhow::Result<()> {
        let y_max = series.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1e-9) * 1.15;
        let n = groups.len().max(1);
        let mut chart = self.frame(root, -0.5..(n as f64 - 0.5), y_max)?;
        let label = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                groups.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        chart.configure_mesh().disable_x_mesh().x_labels(n).x_label_formatter(&label).y_desc(&self.y_label).draw().map_err(err)?;
        let width = 0.8 / series.len().max(1) as f64;
        for (j, (name, values)) in series.iter().enumerate() {
            let color = PALETTE[j % PALETTE.len()];
            chart
                .draw_series(values.iter().enumerate().filter(|(_, v)| v.is_finite()).map(|(i, &v)| {
                    let x0 = i as f64 - 0.4 + j as f64 * width;
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.92, v)], color.filled())
                }))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        draw_legend(&mut chart)
    }

    fn draw_lines(&self, root: &Area<'_>, x_label: &str, log_x: bool, series: &[(String, Vec<(f64, f64)>)]) -> anyhow::Result<()> {
        let tx = |x: f64| {
            if log_x {
                x.max(f64::MIN_POSITIVE).log10()
            } else {
                x
            }
        };
        let points = || series.iter().flat_map(|(_, p)| p.iter().copied()).filter(|(x, y)| x.is_finite() && y.is_finite());
        let (x0, x1) = points().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (x, _)| (a.min(tx(x)), b.max(tx(x))));
        let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0, x1) } else { (0.0, 1.0) };
        let pad = (x1 - x0) * 0.04;
        let y_max = points().map(|(_, y)| y).fold(0.0f64, f64::max).max(1e-9) * 1.1;
        let mut chart = self.frame(root, (x0 - pad)..(x1 + pad), y_max)?;
        let fmt = |x: &f64| {
            if log_x {
                human(10f64.powf(*x))
            } else {
                human(*x)
            }
        };
        chart.configure_mesh().x_desc(x_label).y_desc(&self.y_label).x_label_formatter(&fmt).draw().map_err(err)?;
        for (j, (name, pts)) in series.iter().enumerate() {
            let color = PALETTE[j % PALETTE.len()];
            let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (tx(x), y)).collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(err)?;
        }
        draw_legend(&mut chart)
    }
}

/// The SVG drawing area plots are drawn on.
type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;

/// A chart with f64 axes on an [`Area`].
type Frame<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>>;

/// The series legend, upper right, on a translucent white box.
fn draw_legend<'a, 'b: 'a>(chart: &mut Frame<'a, 'b>) -> anyhow::Result<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// 1500 -> "1.5K", 2_000_000 -> "2M".
fn human(x: f64) -> String {
    let (v, unit) = match x.abs() {
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        a if a >= 1e3 => (x / 1e3, "K"),
        _ => (x, ""),
    };
    let s = format!("{v:.1}");
    format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
}

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("plot: {e:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_both_kinds() {
        let dir = std::env::temp_dir().join(format!("nexthop-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bars = Plot {
            file_tag: "b".into(),
            title: "bars".into(),
            y_label: "M/s".into(),
            chart: Chart::Bars {
                groups: vec!["a".into(), "b".into()],
                series: vec![("x".into(), vec![1.0, 2.0]), ("y".into(), vec![f64::NAN, 3.0])],
            },
        };
        let lines = Plot {
            file_tag: "l".into(),
            title: "lines".into(),
            y_label: "M/s".into(),
            chart: Chart::Lines { x_label: "n".into(), log_x: true, series: vec![("x".into(), vec![(1e3, 1.0), (1e6, 2.0)])] },
        };
        for (p, f) in [(bars, "b.svg"), (lines, "l.svg")] {
            let path = dir.join(f);
            p.draw(&path).unwrap();
            let svg = std::fs::read_to_string(&path).unwrap();
            assert!(svg.contains("<svg") && svg.contains(&p.title));
        }
        assert_eq!(human(1500.0), "1.5K");
        assert_eq!(human(2e6), "2M");
        std::fs::remove_dir_all(dir).ok();
    }
}

//! Line plots drawn with `plotters` into an RGB buffer and written as PNG with `png`: axis
//! titles, tick labels, a legend, one polyline with markers per series, and a logarithmic axis
//! wherever the data spans a decade or more.
//! Text is drawn with DejaVu Sans embedded from the `dejavu` crate, so a plot looks the same on
//! any machine and needs no system fonts.

use std::ops::Range;
use std::path::Path;
use std::sync::Once;

use anyhow::{anyhow, bail, Result};
use plotters::coord::combinators::{BindKeyPoints, IntoLogRange, LogCoord, WithKeyPoints};
use plotters::coord::ranged1d::{AsRangedCoord, Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

/// Width and height of every plot, in pixels.
pub const SIZE: (u32, u32) = (900, 560);

/// Font family name under which the embedded DejaVu Sans is registered.
const FONT: &str = "sans-serif";

/// One series: legend label, RGB colour and (x, y) points in data units.
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Line and marker colour.
    pub rgb: [u8; 3],
    /// Points, in data units, drawn in the order given.
    pub points: Vec<(f64, f64)>,
}

/// What to draw: title, axis titles, series, and an optional right-hand axis that shows the
/// left-hand y value divided by a constant (for example bytes over the clip's duration = B/s).
pub struct Plot<'a> {
    /// Caption above the chart.
    pub title: &'a str,
    /// Title of the x axis.
    pub x_desc: &'a str,
    /// Title of the left-hand y axis.
    pub y_desc: &'a str,
    /// Right-hand axis: (divisor applied to y, axis title); the divisor must be positive.
    pub y2: Option<(f64, &'a str)>,
    /// The series; points with a non-finite coordinate (or a non-positive one on a log axis)
    /// are left out.
    pub series: &'a [Series],
}

fn register() -> Result<()> {
    static ONCE: Once = Once::new();
    let mut ok = true;
    ONCE.call_once(|| {
        ok = register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok();
    });
    if ok {
        Ok(())
    } else {
        bail!("the embedded DejaVu Sans font did not load")
    }
}

/// One axis kind: linear or logarithmic, built from the data's (lo, hi).
trait Axis {
    type Spec: AsRangedCoord<Value = f64>;
    /// Whether the axis is logarithmic (then it only takes positive values).
    const LOG: bool;
    fn spec(lo: f64, hi: f64) -> Self::Spec;
}

struct Lin;
impl Axis for Lin {
    type Spec = Range<f64>;
    const LOG: bool = false;
    fn spec(lo: f64, hi: f64) -> Range<f64> {
        // 5 % headroom each side so markers are not cut by the frame.
        let pad = ((hi - lo) * 0.05).max(hi.abs().max(1e-9) * 1e-3);
        (lo - pad)..(hi + pad)
    }
}

struct Log;
impl Axis for Log {
    type Spec = WithKeyPoints<LogCoord<f64>>;
    const LOG: bool = true;
    fn spec(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
        // A factor of 1.25 (about a tenth of a decade) of headroom each side; labelled ticks at 1, 2 and 5 times each
        // power of ten, grid lines at every integer multiple.
        let (lo, hi) = (lo / 1.25, hi * 1.25);
        let steps = |mults: &[f64]| {
            let mut v = Vec::new();
            for e in lo.log10().floor() as i32..=hi.log10().ceil() as i32 {
                for m in mults {
                    let t = m * 10f64.powi(e);
                    if (lo..=hi).contains(&t) {
                        v.push(t);
                    }
                }
            }
            v
        };
        let coord: LogCoord<f64> = (lo..hi).log_scale().into();
        coord
            .with_key_points(steps(&[1.0, 2.0, 5.0]))
            .with_light_points(steps(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]))
    }
}

/// Whether data from `lo` to `hi` is all positive and spans a decade or more (then the axis is
/// logarithmic).
fn spans_decades(lo: f64, hi: f64) -> bool {
    lo > 0.0 && hi / lo >= 10.0
}

/// Tick label: up to three significant digits, no trailing zeros.
fn tick(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Refuses a plot path that does not end in `.png` (any case): plots are written as PNG only,
/// and another extension would misname the file. Call it before expensive work.
///
/// # Errors
/// When the extension is not `png`.
pub fn check_png_path(path: &Path) -> Result<()> {
    let png = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"));
    if !png {
        bail!(
            "{}: plots are written as PNG; give a path ending in .png",
            path.display()
        );
    }
    Ok(())
}

/// Renders `plot` to the PNG file `path` (`SIZE` pixels).
///
/// # Errors
/// When `path` does not end in `.png`, when no series has a finite point, or when the file
/// cannot be written.
pub fn render_png(path: &Path, plot: &Plot) -> Result<()> {
    check_png_path(path)?;
    register()?;
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    let all: Vec<(f64, f64)> = plot
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(finite)
        .copied()
        .collect();
    if all.is_empty() {
        bail!("nothing to plot: no series has a finite point");
    }
    let bounds = |f: fn(&(f64, f64)) -> f64| {
        all.iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x_lo, x_hi) = bounds(|p| p.0);
    let (y_lo, y_hi) = bounds(|p| p.1);
    let log_x = spans_decades(x_lo, x_hi);
    let log_y = spans_decades(y_lo, y_hi);
    match (log_x, log_y) {
        (true, true) => draw::<Log, Log>(path, plot, (x_lo, x_hi), (y_lo, y_hi)),
        (true, false) => draw::<Log, Lin>(path, plot, (x_lo, x_hi), (y_lo, y_hi)),
        (false, true) => draw::<Lin, Log>(path, plot, (x_lo, x_hi), (y_lo, y_hi)),
        (false, false) => draw::<Lin, Lin>(path, plot, (x_lo, x_hi), (y_lo, y_hi)),
    }
}

fn draw<X: Axis, Y: Axis>(path: &Path, plot: &Plot, x: (f64, f64), y: (f64, f64)) -> Result<()>
where
    <X::Spec as AsRangedCoord>::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    <Y::Spec as AsRangedCoord>::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
    draw_rgb::<X, Y>(&mut rgb, path, plot, x, y)?;
    write_png(path, &rgb)
}

/// Writes `rgb` (`SIZE` pixels, 8-bit RGB, rows top to bottom) to `path` as a PNG file.
///
/// # Errors
/// When the file cannot be created or written.
fn write_png(path: &Path, rgb: &[u8]) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| anyhow!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(|e| err(&e))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), SIZE.0, SIZE.1);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| err(&e))?;
    writer.write_image_data(rgb).map_err(|e| err(&e))?;
    writer.finish().map_err(|e| err(&e))
}

/// Draws the chart into `rgb`, a `SIZE` 8-bit RGB buffer; `path` only names the plot in errors.
fn draw_rgb<X: Axis, Y: Axis>(
    rgb: &mut [u8],
    path: &Path,
    plot: &Plot,
    x: (f64, f64),
    y: (f64, f64),
) -> Result<()>
where
    <X::Spec as AsRangedCoord>::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    <Y::Spec as AsRangedCoord>::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let err = |e: &dyn std::fmt::Display| anyhow!("cannot draw {}: {e}", path.display());
    let root = BitMapBackend::with_buffer(rgb, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    // The right-hand axis shows y / div; without one, the secondary coordinates repeat the
    // primary ones and draw nothing.
    let (div, right) = match plot.y2 {
        Some((div, _)) if !(div > 0.0 && div.is_finite()) => {
            bail!("the right-hand axis needs a positive divisor, got {div}")
        }
        Some((div, _)) => (div, 90),
        None => (1.0, 20),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(plot.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .right_y_label_area_size(right)
        .build_cartesian_2d(X::spec(x.0, x.1), Y::spec(y.0, y.1))
        .map_err(|e| err(&e))?
        .set_secondary_coord(X::spec(x.0, x.1), Y::spec(y.0 / div, y.1 / div));
    chart
        .configure_mesh()
        .x_desc(plot.x_desc)
        .y_desc(plot.y_desc)
        .axis_desc_style((FONT, 17))
        .label_style((FONT, 14))
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(200, 200, 200))
        .draw()
        .map_err(|e| err(&e))?;
    if let Some((_, desc)) = plot.y2 {
        chart
            .configure_secondary_axes()
            .y_desc(desc)
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 14))
            .y_label_formatter(&|v| tick(*v))
            .draw()
            .map_err(|e| err(&e))?;
    }
    for s in plot.series {
        let colour = RGBColor(s.rgb[0], s.rgb[1], s.rgb[2]);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .filter(|p| (!X::LOG || p.0 > 0.0) && (!Y::LOG || p.1 > 0.0))
            .copied()
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label(s.label.as_str())
            .legend(move |(lx, ly)| {
                PathElement::new(vec![(lx, ly), (lx + 24, ly)], colour.stroke_width(2))
            });
        chart
            .draw_series(PointSeries::of_element(
                pts,
                4,
                colour.filled(),
                &|c, size, style| EmptyElement::at(c) + Circle::new((0, 0), size, style),
            ))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_keep_three_significant_digits() {
        assert_eq!(tick(0.1), "0.1");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(tick(2.0), "2");
        assert_eq!(tick(12.5), "12.5");
        assert_eq!(tick(6284.0), "6284");
        assert_eq!(tick(0.0), "0");
    }

    #[test]
    fn log_axis_only_for_positive_data_over_a_decade() {
        assert!(spans_decades(0.1, 20.0));
        assert!(!spans_decades(1000.0, 6300.0));
        assert!(!spans_decades(0.0, 100.0));
        assert!(!spans_decades(-1.0, 100.0));
    }

    #[test]
    fn log_ticks_at_one_two_five() {
        // The axis runs from 0.11 / 1.25 = 0.088 to 15 * 1.25 = 18.75.
        let c = Log::spec(0.11, 15.0);
        assert_eq!(c.bold_points(), &[0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]);
        // 0.09, then 0.1 to 0.9, 1 to 9 and 10.
        assert_eq!(c.light_points().len(), 1 + 9 + 9 + 1);
        assert_eq!(c.light_points()[0], 9.0 * 10f64.powi(-2));
    }

    #[test]
    fn non_png_paths_are_refused() {
        assert!(check_png_path(Path::new("a/sweep.png")).is_ok());
        assert!(check_png_path(Path::new("SWEEP.PNG")).is_ok());
        assert!(check_png_path(Path::new("sweep.svg")).is_err());
        assert!(check_png_path(Path::new("sweep")).is_err());
    }
}

//! A small PNG line plot (no font dependencies): axes with tick marks and numeric tick labels
//! drawn from a built-in 3×5 digit font, one polyline with markers per series.

use std::io::Write;

/// One series: RGB colour and (x, y) points.
pub struct Series {
    /// Line colour.
    pub rgb: [u8; 3],
    /// Points, in data units.
    pub points: Vec<(f64, f64)>,
}

const W: usize = 900;
const H: usize = 560;
const L: usize = 90;
const R: usize = 30;
const T: usize = 30;
const B: usize = 60;

/// 3×5 glyphs for `0-9 . - e`, rows top to bottom, bits left to right.
fn glyph(c: char) -> Option<[u8; 5]> {
    Some(match c {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '.' => [0, 0, 0, 0, 2],
        '-' => [0, 0, 7, 0, 0],
        _ => return None,
    })
}

struct Canvas {
    px: Vec<u8>,
}

impl Canvas {
    fn set(&mut self, x: i64, y: i64, rgb: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < W && (y as usize) < H {
            let o = (y as usize * W + x as usize) * 3;
            self.px[o..o + 3].copy_from_slice(&rgb);
        }
    }
    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), rgb: [u8; 3], thick: i64) {
        let n = ((x1 - x0).abs().max((y1 - y0).abs()).ceil() as i64).max(1);
        for i in 0..=n {
            let t = i as f64 / n as f64;
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            for dx in -thick / 2..=thick / 2 {
                for dy in -thick / 2..=thick / 2 {
                    self.set(x.round() as i64 + dx, y.round() as i64 + dy, rgb);
                }
            }
        }
    }
    fn text(&mut self, x: i64, y: i64, s: &str, scale: i64) {
        let mut cx = x;
        for c in s.chars() {
            if let Some(g) = glyph(c) {
                for (r, row) in g.iter().enumerate() {
                    for col in 0..3 {
                        if row & (4 >> col) != 0 {
                            for sx in 0..scale {
                                for sy in 0..scale {
                                    self.set(
                                        cx + col * scale + sx,
                                        y + r as i64 * scale + sy,
                                        [0, 0, 0],
                                    );
                                }
                            }
                        }
                    }
                }
            }
            cx += 4 * scale;
        }
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

fn label(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders the series with logarithmic axes (x and y) into PNG bytes.
pub fn render_loglog(series: &[Series]) -> Vec<u8> {
    let mut cv = Canvas {
        px: vec![255; W * H * 3],
    };
    let pts = series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0 > 0.0 && p.1 > 0.0);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x.log10());
        x1 = x1.max(x.log10());
        y0 = y0.min(y.log10());
        y1 = y1.max(y.log10());
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    let (x0, x1) = (x0.floor(), x1.ceil().max(x0.floor() + 1.0));
    let (y0, y1) = (y0.floor(), y1.ceil().max(y0.floor() + 1.0));
    let map = |x: f64, y: f64| {
        (
            L as f64 + (x.log10() - x0) / (x1 - x0) * (W - L - R) as f64,
            (H - B) as f64 - (y.log10() - y0) / (y1 - y0) * (H - T - B) as f64,
        )
    };
    let axis = [0, 0, 0];
    cv.line((L as f64, T as f64), (L as f64, (H - B) as f64), axis, 1);
    cv.line(
        (L as f64, (H - B) as f64),
        ((W - R) as f64, (H - B) as f64),
        axis,
        1,
    );
    for d in x0 as i32..=x1 as i32 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(d);
            if v.log10() > x1 + 1e-9 {
                continue;
            }
            let (px, _) = map(v, 10f64.powf(y0));
            cv.line((px, (H - B) as f64), (px, (H - B + 6) as f64), axis, 1);
            cv.text(px as i64 - 8, (H - B + 12) as i64, &label(v), 2);
        }
    }
    for d in y0 as i32..=y1 as i32 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(d);
            if v.log10() > y1 + 1e-9 {
                continue;
            }
            let (_, py) = map(10f64.powf(x0), v);
            cv.line(((L - 6) as f64, py), (L as f64, py), axis, 1);
            cv.text(5, py as i64 - 5, &label(v), 2);
        }
    }
    for s in series {
        let p: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.0 > 0.0 && p.1 > 0.0)
            .map(|&(x, y)| map(x, y))
            .collect();
        for w in p.windows(2) {
            cv.line(w[0], w[1], s.rgb, 3);
        }
        for &(x, y) in &p {
            for dx in -4..=4 {
                for dy in -4..=4 {
                    cv.set(x as i64 + dx, y as i64 + dy, s.rgb);
                }
            }
        }
    }
    let mut raw = Vec::with_capacity((W * 3 + 1) * H);
    for row in cv.px.chunks(W * 3) {
        raw.push(0);
        raw.extend_from_slice(row);
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    let _ = z.write_all(&raw);
    let idat = z.finish().unwrap_or_default();
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&(W as u32).to_be_bytes());
    ihdr.extend_from_slice(&(H as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    out
}

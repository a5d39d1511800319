//! The README's timelines as a reader sees them: headless Chromium (Debian's `chromium`) draws
//! each picture. In a page that inlines the SVG, a script measures every label's rendered text
//! (`getBBox`, with the fonts the browser really uses): each must sit inside the box the
//! renderer reserved for it, and no two may overlap. A screenshot of each SVG is taken and
//! read back (a small PNG decoder below): at full length the eager scale-out's pauses show
//! their colour on every original member's lane, and the crash picture shows c4's time as the
//! owner until its session expired, hatched red, where the rest of its dead lane is grey.
//! Screenshots go to `target/tmp/timeline-screenshots/`.
//!
//! Ignored by a plain `cargo test` (it says so); `.ci/run` runs it with `--ignored` and
//! `CGSIM_BROWSER_TESTS=1`, and then a missing browser fails the test.
//! `CGSIM_CHROMIUM` names another browser binary than `/usr/bin/chromium`.

use crate::browser_support;

use cgsim::report::{render_timeline, TimelineOptions};
use cgsim::scenario::{load, LoadOptions};
use cgsim::world::{run, RunOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

fn chromium() -> Option<PathBuf> {
    browser_support::chromium("timeline_browser")
}

fn tempdir() -> PathBuf {
    browser_support::tempdir("cgsim-timeline-browser")
}

/// At one device pixel per SVG unit, with time for the page's script.
fn browser(bin: &Path, extra: &[&str], url: &str) -> Vec<u8> {
    let flags = [
        &[
            "--force-device-scale-factor=1",
            "--virtual-time-budget=5000",
        ],
        extra,
    ]
    .concat();
    browser_support::browser(bin, &flags, url)
}

/// A window of simulated time, in ms (`None`: the whole run).
type Window = Option<(u64, u64)>;

/// The README's pictures, as `scripts/timelines` makes them.
const PICTURES: [(&str, &str, &str, Window); 4] = [
    (
        "scale-out-eager",
        "scale-out",
        "eager",
        Some((59_900, 60_300)),
    ),
    (
        "scale-out-cooperative",
        "scale-out",
        "cooperative",
        Some((59_900, 63_900)),
    ),
    ("scale-out-eager-full", "scale-out", "eager", None),
    ("crash-eager", "crash", "eager", None),
];

fn picture(name: &str, variant: &str, window_ms: Window) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.toml"));
    let scenario = load(
        &path,
        &LoadOptions {
            seed: None,
            variant: Some(variant.to_string()),
            sets: vec![],
        },
    )
    .expect("scenario loads");
    let out = run(
        &scenario,
        RunOptions {
            keep_trace: false,
            record_history: true,
            ..RunOptions::default()
        },
    );
    render_timeline(
        out.history.as_ref().unwrap(),
        &out.report,
        &TimelineOptions { window_ms },
    )
}

/// Measures every label in the page: its box and its text's rendered box.
const MEASURE: &str = r#"<script>
const out = [];
for (const g of document.querySelectorAll('g.label')) {
  const r = g.querySelector('rect.label-box');
  const t = g.querySelector('text');
  const b = t.getBBox();
  out.push({text: t.textContent,
            box: [r.x.baseVal.value, r.y.baseVal.value, r.width.baseVal.value, r.height.baseVal.value],
            drawn: [b.x, b.y, b.width, b.height]});
}
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

/// The labels as Chromium drew them: (text, reserved box, rendered text box).
fn measured(bin: &Path, dir: &Path, svg: &str) -> Vec<(String, [f64; 4], [f64; 4])> {
    let page = dir.join("page.html");
    std::fs::write(
        &page,
        format!("<!DOCTYPE html><html><body style=\"margin:0\">{svg}{MEASURE}</body></html>"),
    )
    .unwrap();
    let dom = String::from_utf8(browser(
        bin,
        &["--dump-dom"],
        &format!("file://{}", page.display()),
    ))
    .unwrap();
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&json).expect("measurements");
    let four = |a: &serde_json::Value| -> [f64; 4] {
        let a = a.as_array().unwrap();
        [0, 1, 2, 3].map(|i| a[i].as_f64().unwrap())
    };
    v.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["text"].as_str().unwrap().to_string(),
                four(&m["box"]),
                four(&m["drawn"]),
            )
        })
        .collect()
}

/// An RGBA image from a PNG (8 bits per channel, RGB or RGBA, not interlaced: what Chromium
/// writes).
struct Image {
    width: usize,
    height: usize,
    rgba: Vec<[u8; 4]>,
}

impl Image {
    fn decode(png: &[u8]) -> Image {
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
        let (mut width, mut height, mut channels) = (0, 0, 0);
        let mut data = Vec::new();
        let mut at = 8;
        while at + 8 <= png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let kind = &png[at + 4..at + 8];
            let body = &png[at + 8..at + 8 + len];
            match kind {
                b"IHDR" => {
                    width = u32::from_be_bytes(body[0..4].try_into().unwrap()) as usize;
                    height = u32::from_be_bytes(body[4..8].try_into().unwrap()) as usize;
                    assert_eq!(body[8], 8, "8 bits per channel");
                    channels = match body[9] {
                        2 => 3,
                        6 => 4,
                        other => panic!("colour type {other}"),
                    };
                    assert_eq!(body[12], 0, "not interlaced");
                }
                b"IDAT" => data.extend_from_slice(body),
                b"IEND" => break,
                _ => {}
            }
            at += 12 + len;
        }
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&data[..])
            .read_to_end(&mut raw)
            .expect("zlib data");
        let stride = width * channels;
        let mut pixels = vec![0u8; height * stride];
        for y in 0..height {
            let line = &raw[y * (stride + 1)..(y + 1) * (stride + 1)];
            let filter = line[0];
            for x in 0..stride {
                let a = if x >= channels {
                    pixels[y * stride + x - channels]
                } else {
                    0
                } as i32;
                let b = if y > 0 {
                    pixels[(y - 1) * stride + x]
                } else {
                    0
                } as i32;
                let c = if y > 0 && x >= channels {
                    pixels[(y - 1) * stride + x - channels]
                } else {
                    0
                } as i32;
                let predicted = match filter {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => (a + b) / 2,
                    4 => {
                        let p = a + b - c;
                        let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                        if pa <= pb && pa <= pc {
                            a
                        } else if pb <= pc {
                            b
                        } else {
                            c
                        }
                    }
                    other => panic!("filter {other}"),
                };
                pixels[y * stride + x] = (line[1 + x] as i32 + predicted) as u8;
            }
        }
        let rgba = pixels
            .chunks(channels)
            .map(|p| [p[0], p[1], p[2], if channels == 4 { p[3] } else { 255 }])
            .collect();
        Image {
            width,
            height,
            rgba,
        }
    }

    fn at(&self, x: f64, y: f64) -> [u8; 4] {
        let (x, y) = (x.floor() as usize, y.floor() as usize);
        assert!(x < self.width && y < self.height, "({x}, {y}) outside");
        self.rgba[y * self.width + x]
    }
}

fn close(p: [u8; 4], rgb: [u8; 3]) -> bool {
    (0..3).all(|i| (p[i] as i32 - rgb[i] as i32).abs() <= 16)
}

fn reddish(p: [u8; 4]) -> bool {
    p[0] as i32 > p[1] as i32 + 40 && p[0] as i32 > p[2] as i32 + 40
}

fn num(node: roxmltree::Node, attr: &str) -> f64 {
    node.attribute(attr).unwrap().parse().unwrap()
}

fn has_class(node: &roxmltree::Node, class: &str) -> bool {
    node.attribute("class")
        .is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

/// The rect of `class` in `member`'s lane: x, y, width, height.
fn rect_in_lane(doc: &roxmltree::Document, member: &str, class: &str) -> [f64; 4] {
    let lane = doc
        .descendants()
        .find(|n| has_class(n, "lane") && n.attribute("data-member") == Some(member))
        .unwrap_or_else(|| panic!("{member}'s lane"));
    let r = lane
        .descendants()
        .find(|n| n.has_tag_name("rect") && has_class(n, class))
        .unwrap_or_else(|| panic!("a {class} in {member}'s lane"));
    [num(r, "x"), num(r, "y"), num(r, "width"), num(r, "height")]
}

#[test]
#[ignore = "needs CGSIM_BROWSER_TESTS=1 and chromium; .ci/run runs it with --ignored"]
fn the_readme_timelines_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("timeline-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    for (file, name, variant, window) in PICTURES {
        let svg = picture(name, variant, window);
        let dir = tempdir();

        // The labels as drawn with the browser's fonts: inside their boxes, apart.
        let labels = measured(&bin, &dir, &svg);
        assert!(!labels.is_empty(), "{file}: labels");
        for (text, b, d) in &labels {
            assert!(
                d[0] >= b[0] - 0.5 && d[0] + d[2] <= b[0] + b[2] + 0.5,
                "{file}: {text:?} drawn {d:?} outside its box {b:?}"
            );
            assert!(
                d[1] >= b[1] - 1.5 && d[1] + d[3] <= b[1] + b[3] + 1.5,
                "{file}: {text:?} drawn {d:?} outside its box {b:?}"
            );
        }
        for (i, (ta, _, a)) in labels.iter().enumerate() {
            for (tb, _, b) in &labels[i + 1..] {
                let apart = a[0] + a[2] <= b[0]
                    || b[0] + b[2] <= a[0]
                    || a[1] + a[3] <= b[1]
                    || b[1] + b[3] <= a[1];
                assert!(apart, "{file}: {ta:?} and {tb:?} drawn over each other");
            }
        }

        // A screenshot of the picture itself.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let height = num(doc.root_element(), "height").ceil() as u32;
        let svg_path = dir.join(format!("{file}.svg"));
        std::fs::write(&svg_path, &svg).unwrap();
        let png_path = shots.join(format!("{file}.png"));
        browser(
            &bin,
            &[
                &format!("--screenshot={}", png_path.display()),
                &format!("--window-size=1200,{height}"),
            ],
            &format!("file://{}", svg_path.display()),
        );
        let image = Image::decode(&std::fs::read(&png_path).expect("a screenshot"));
        assert_eq!(image.width, 1200, "{file}");
        match file {
            // Each original member's pause, a few ms of 450 s, shows its colour on its lane.
            "scale-out-eager-full" => {
                for member in ["c1", "c2", "c3", "c4"] {
                    let [x, y, w, h] = rect_in_lane(&doc, member, "pause");
                    assert_eq!(w, cgsim::report::MIN_WIDTH);
                    let pink = (0..h as usize)
                        .filter(|dy| {
                            close(image.at(x + w / 2.0, y + *dy as f64 + 0.5), [251, 180, 165])
                        })
                        .count();
                    assert!(
                        pink * 2 >= h as usize,
                        "{member}'s pause shows in {pink} of {h} pixels"
                    );
                }
            }
            // c4 owned its partitions to the coordinator until its session expired: hatched
            // red from the crash; after that its lane is plain grey.
            "crash-eager" => {
                let [x, y, w, h] = rect_in_lane(&doc, "c4", "held");
                let row = y + h / 2.0;
                let red = (1..w as usize - 1)
                    .filter(|dx| reddish(image.at(x + *dx as f64, row)))
                    .count();
                assert!(red * 5 >= w as usize, "hatching in {red} of {w} pixels");
                let after = (0..100)
                    .filter(|dx| reddish(image.at(x + w + 10.0 + *dx as f64, row)))
                    .count();
                assert_eq!(after, 0, "no hatching once its session expired");
            }
            _ => {}
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

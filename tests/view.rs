//! `statepack view` in a real browser: headless Chromium driven over the DevTools protocol
//! (a websocket), against the viewer run as a process on files built in code.
//!
//! The browser is Debian's `chromium` (or `$STATEPACK_CHROMIUM`). Without one these tests
//! skip with a message; under `CI=true` they fail. The request checks (token, `Host`) need
//! no browser and always run.
//!
//! With `STATEPACK_VIEW_SHOTS=DIR` the tests save the screenshots they take into DIR (the
//! pictures of docs/viewer.md come from such a run).

use serde_json::{json, Value};
use statepack::formats::{
    anim_clip, cbtrack, rply, snap, study_tracks, world_snapshot, FormatSpec,
};
use statepack::runtime::io::TraceNode;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn under_ci() -> bool {
    matches!(std::env::var("CI").as_deref(), Ok("true") | Ok("1"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "statepack-view-{}-{}-{name}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `statepack view FILE --no-open [more]`, and the address it prints.
fn viewer(file: &Path, more: &[&str]) -> (Proc, String) {
    viewer_with(env!("CARGO_BIN_EXE_statepack").as_ref(), file, more)
}

fn viewer_with(exe: &Path, file: &Path, more: &[&str]) -> (Proc, String) {
    let mut child = Command::new(exe)
        .arg("view")
        .arg(file)
        .args(more)
        .arg("--no-open")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let proc = Proc(child);
    let mut lines = BufReader::new(out).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("the viewer ended before printing its address")
            .unwrap();
        if let Some(i) = line.find("http://") {
            break line[i..].split_whitespace().next().unwrap().to_owned();
        }
    };
    // Keep draining its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (proc, url)
}

/// One raw HTTP/1.1 GET; the status code.
fn get_status(addr: &str, path: &str, host: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    resp.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

fn write_sample(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn sample(fmt: &FormatSpec, which: Option<&str>) -> Vec<u8> {
    let all = (fmt.samples)();
    match which {
        Some(n) => {
            all.into_iter()
                .find(|(name, _)| name == n)
                .unwrap_or_else(|| panic!("no {} sample {n}", fmt.name))
                .1
        }
        None => all.into_iter().next().unwrap().1,
    }
}

/// Requests without the token, with a wrong token or with another `Host` are refused; the
/// page and its API answer only with both right.
#[test]
fn requests_without_the_token_or_from_another_host_are_refused() {
    let dir = scratch("security");
    let f = write_sample(&dir, "a.snap", &sample(&snap::FORMAT, None));
    let (_p, url) = viewer(&f, &[]);
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_once('/').unwrap();
    let path = format!("/{path}");
    assert!(addr.starts_with("127.0.0.1:"), "{url}");
    let token = path.trim_matches('/');
    assert!(
        token.len() >= 32 && token.chars().all(|c| c.is_ascii_hexdigit()),
        "{token}"
    );
    assert_eq!(get_status(addr, &path, addr), 200, "the page itself");
    assert_eq!(get_status(addr, &format!("{path}api/info"), addr), 200);
    assert_eq!(get_status(addr, "/", addr), 404, "no token");
    assert_eq!(get_status(addr, "/api/info", addr), 404, "no token");
    let wrong: String = token
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    assert_eq!(get_status(addr, &format!("/{wrong}/api/info"), addr), 404);
    // Bad parameters are refused with 400 and leave the server serving.
    for (bad, want) in [
        ("api/at?stream=4000000000&byte=0", 400),
        ("api/at?stream=1&byte=0", 400),
        ("api/hex?stream=99999999&offset=0&len=16", 400),
        ("api/children?id=99999999.0", 400),
        ("api/children?id=0.7", 400),
        (
            "api/children?id=0.0&from=18446744073709551615&count=1000",
            200,
        ),
        ("api/node?id=x", 400),
        ("api/frame?t=NaN", 400),
        ("api/nothing", 404),
    ] {
        assert_eq!(
            get_status(addr, &format!("{path}{bad}"), addr),
            want,
            "{bad}"
        );
    }
    assert_eq!(get_status(addr, &format!("{path}api/info"), addr), 200);
    let port = addr.split(':').nth(1).unwrap();
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{port}"),
        format!("localhost:{port}"),
        format!("127.0.0.1:{}", port.parse::<u32>().unwrap() + 1),
    ] {
        assert_eq!(
            get_status(addr, &format!("{path}api/info"), &host),
            403,
            "Host {host}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------ the browser

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("STATEPACK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The browser, or `None` (with a message) when there is none outside CI.
fn browser() -> Option<Browser> {
    match chromium() {
        Some(p) => Some(Browser::launch(&p)),
        None if under_ci() => {
            panic!("no Chromium found (install Debian's `chromium`); under CI the browser tests must run")
        }
        None => {
            eprintln!("skipped: no Chromium found (install `chromium` or set STATEPACK_CHROMIUM)");
            None
        }
    }
}

struct Browser {
    _proc: Proc,
    profile: PathBuf,
    ws: tungstenite::WebSocket<TcpStream>,
    next: u64,
    session: String,
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The browser first, and gracefully, so that its helper processes end with it: they
        // write into the profile until they exit.
        let id = self.next + 1;
        let _ = self.ws.send(tungstenite::Message::text(
            json!({ "id": id, "method": "Browser.close" }).to_string(),
        ));
        let _ = self.ws.close(None);
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while std::time::Instant::now() < until {
            if matches!(self._proc.0.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self._proc.0.kill();
        let _ = self._proc.0.wait();
        for _ in 0..10 {
            let _ = std::fs::remove_dir_all(&self.profile);
            if !self.profile.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Browser {
    fn launch(exe: &Path) -> Browser {
        let profile = scratch("chromium-profile");
        let mut child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--enable-unsafe-swiftshader",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1280,800",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
        let err = child.stderr.take().unwrap();
        let proc = Proc(child);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(i) = line.find("ws://") {
                    let _ = tx.send(line[i..].trim().to_owned());
                }
            }
        });
        let ws_url = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("Chromium did not print its DevTools address");
        let hostport = ws_url["ws://".len()..]
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let tcp = TcpStream::connect(&hostport).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let (ws, _) = tungstenite::client(ws_url.as_str(), tcp).expect("DevTools handshake");
        let mut b = Browser {
            _proc: proc,
            profile,
            ws,
            next: 0,
            session: String::new(),
        };
        let t = b.call("Target.createTarget", json!({ "url": "about:blank" }));
        let target = t["targetId"].as_str().unwrap().to_owned();
        let s = b.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        );
        b.session = s["sessionId"].as_str().unwrap().to_owned();
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        );
        b
    }

    /// One DevTools command (to the page once attached); its result.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(tungstenite::Message::Text(msg.to_string()))
            .unwrap();
        loop {
            let m = self.ws.read().expect("DevTools connection");
            let tungstenite::Message::Text(t) = m else {
                continue;
            };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
        }
    }

    /// Evaluates `expr` in the page (promises awaited); its value.
    fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({ "expression": expr, "awaitPromise": true, "returnByValue": true }),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is true in the page; panics with `what` after 60 s.
    fn wait(&mut self, expr: &str, what: &str) {
        let start = Instant::now();
        loop {
            if self.eval(&format!("!!({expr})")) == json!(true) {
                return;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let err = self.eval("document.getElementById('error').textContent");
                panic!("timed out waiting for {what} ({expr}); page error banner: {err}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn open(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        self.wait("window.viewer && window.viewer.ready", "the page to load");
    }

    /// A PNG of the page, or of the element with id `clip`.
    fn screenshot(&mut self, clip: Option<&str>) -> Vec<u8> {
        let mut params = json!({ "format": "png" });
        if let Some(id) = clip {
            let r = self.eval(&format!(
                "(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }})()"
            ));
            params["clip"] =
                json!({ "x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1 });
        }
        let r = self.call("Page.captureScreenshot", params);
        data_encoding::BASE64
            .decode(r["data"].as_str().unwrap().as_bytes())
            .unwrap()
    }
}

/// Saves a screenshot where `STATEPACK_VIEW_SHOTS` says, if it says.
fn keep_shot(name: &str, png: &[u8]) {
    if let Some(dir) = std::env::var_os("STATEPACK_VIEW_SHOTS") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), png).unwrap();
    }
}

/// Names of the tree rows under the root, as the page shows them.
const ROOT_CHILDREN: &str = "[...document.querySelectorAll('#tree > div > .kids > div > .node .nm')].map(e => e.textContent)";

/// The hex view's highlighted byte offsets.
const HIGHLIGHTED: &str =
    "[...document.querySelectorAll('#hex .b.sel, #hex .b.selbits')].map(e => Number(e.dataset.o))";

/// Clicks the root-level tree row named `name`.
fn click_root_child(b: &mut Browser, name: &str) {
    b.eval(&format!(
        "[...document.querySelectorAll('#tree > div > .kids > div > .node')].find(r => r.querySelector('.nm').textContent === {}).click()",
        json!(name)
    ));
}

/// The innermost node of a traced decode covering byte `at`, as a field path.
fn innermost(t: &TraceNode, at: u64) -> String {
    let mut path = String::new();
    let mut cur = t;
    'down: loop {
        for c in &cur.children {
            if c.start <= at && at < c.end {
                if !path.is_empty() && !c.name.starts_with('[') {
                    path.push('.');
                }
                path.push_str(&c.name);
                cur = c;
                continue 'down;
            }
        }
        return path;
    }
}

/// The SNAP tree lists the file's fields (as the decode reads them); clicking a field
/// highlights its bytes; clicking a byte selects the innermost field covering it.
#[test]
fn snap_tree_fields_and_byte_selection() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("snap");
    let bytes = sample(&snap::FORMAT, None);
    let f = write_sample(&dir, "sample.snap", &bytes);
    let (_p, url) = viewer(&f, &[]);
    b.open(&url);
    let (_, tree) = (snap::FORMAT.decode_traced)(&bytes);
    let want: Vec<&str> = tree.children.iter().map(|c| c.name.as_str()).collect();
    b.wait(
        &format!("{ROOT_CHILDREN}.length === {}", want.len()),
        "the root's children",
    );
    assert_eq!(b.eval(ROOT_CHILDREN), json!(want));

    // Clicking a field highlights exactly its byte range.
    let field = &tree.children[1];
    click_root_child(&mut b, &field.name);
    b.wait(&format!("{HIGHLIGHTED}.length > 0"), "a highlight");
    let got = b.eval(HIGHLIGHTED);
    let want_bytes: Vec<u64> = (field.start..field.end).collect();
    assert_eq!(got, json!(want_bytes), "bytes of {}", field.name);

    // Clicking a byte selects the innermost field covering it.
    let at = (bytes.len() as u64 / 2).min(100);
    let want_field = innermost(&tree, at);
    b.eval(&format!(
        "document.querySelector('#hex .b[data-o=\"{at}\"]').click()"
    ));
    b.wait(
        &format!("window.viewer.field === {}", json!(want_field)),
        "the clicked byte's field",
    );
    keep_shot("viewer-snap.png", &b.screenshot(None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// With --schema the tree lists the schema's fields; a bit field highlights the bytes its
/// bits touch.
#[test]
fn schema_tree_fields() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("schema");
    let ksy = dir.join("demo.ksy");
    std::fs::write(
        &ksy,
        "meta:\n  id: demo\n  endian: le\nseq:\n  - id: magic\n    contents: DM\n  - id: count\n    type: u1\n  - id: items\n    type: item\n    repeat: expr\n    repeat-expr: count\n  - id: tail\n    type: u2\ntypes:\n  item:\n    seq:\n      - id: code\n        type: u2\n      - id: flag\n        type: b1\n      - id: level\n        type: b7\n",
    )
    .unwrap();
    let f = write_sample(&dir, "demo.bin", b"DM\x02\x01\x00\x85\x02\x00\x03\x09\x00");
    let (_p, url) = viewer(&f, &["--schema", ksy.to_str().unwrap()]);
    b.open(&url);
    b.wait(
        &format!("{ROOT_CHILDREN}.length === 4"),
        "the root's children",
    );
    assert_eq!(
        b.eval(ROOT_CHILDREN),
        json!(["magic", "count", "items", "tail"])
    );
    click_root_child(&mut b, "count");
    b.wait(&format!("{HIGHLIGHTED}.length === 1"), "a highlight");
    assert_eq!(b.eval(HIGHLIGHTED), json!([2]));
    click_root_child(&mut b, "tail");
    b.wait(&format!("{HIGHLIGHTED}[0] === 9"), "the tail's bytes");
    assert_eq!(b.eval(HIGHLIGHTED), json!([9, 10]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file cut short shows the tree read so far and the error at its field and byte.
#[test]
fn corrupt_file_shows_its_error_in_place() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("corrupt");
    let full = sample(&snap::FORMAT, None);
    let bytes = &full[..full.len() / 2];
    let err = (snap::FORMAT.decode_raw)(bytes).expect_err("a cut file does not decode");
    let f = write_sample(&dir, "cut.snap", bytes);
    let (_p, url) = viewer(&f, &[]);
    b.open(&url);
    b.wait(
        "!document.getElementById('error').hidden",
        "the error banner",
    );
    let banner = b.eval("document.getElementById('error').textContent");
    assert!(
        banner.as_str().unwrap().contains(&err.to_string()),
        "{banner} should name {err}"
    );
    b.wait("document.querySelector('.node.failed')", "the failed field");
    let failed_text = b.eval("document.querySelector('.node.failed .errnote').textContent");
    assert!(
        failed_text.as_str().unwrap().contains(&err.to_string()),
        "{failed_text}"
    );
    b.wait("document.querySelector('#hex .b.err')", "the error byte");
    assert_eq!(
        b.eval("Number(document.querySelector('#hex .b.err').dataset.o)"),
        json!(err.offset)
    );
    let path = err.path.to_string();
    let field = b.eval("window.viewer.field");
    assert!(
        path.starts_with(field.as_str().unwrap()),
        "the selected field {field} is the failing one or holds it ({path})"
    );
    keep_shot("viewer-error.png", &b.screenshot(None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file a --schema schema does not read to the end shows the fields read before the cut
/// (the list's first element whole, the second up to its failing field) and the error on
/// the failing field, its byte marked in the hex view.
#[test]
fn schema_file_cut_short_shows_the_partial_tree_and_its_error() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("schema-cut");
    let ksy_text = "meta:\n  id: demo\n  endian: le\nseq:\n  - id: count\n    type: u1\n  - id: items\n    type: item\n    repeat: expr\n    repeat-expr: count\n  - id: tail\n    type: u2\ntypes:\n  item:\n    seq:\n      - id: code\n        type: u2\n      - id: name\n        type: strz\n        encoding: ASCII\n      - id: level\n        type: u1\n";
    let ksy = dir.join("demo.ksy");
    std::fs::write(&ksy, ksy_text).unwrap();
    // The second element's name has no terminator: the file ends inside it.
    let bytes = b"\x02\x01\x00a\x00\x05\x02\x00bcd";
    let schema = statepack_codegen::load_checked(
        ksy_text,
        "demo.ksy",
        std::path::Path::new("demo.ksy"),
        &[],
    )
    .expect("schema");
    let err = statepack_codegen::interp::decode(&schema, bytes).expect_err("cut");
    assert_eq!(err.path.to_string(), "items[1].name");
    assert!(err.offset < bytes.len() as u64, "{err}");
    let f = write_sample(&dir, "cut.bin", bytes);
    let (_p, url) = viewer(&f, &["--schema", ksy.to_str().unwrap()]);
    b.open(&url);
    b.wait(
        "!document.getElementById('error').hidden",
        "the error banner",
    );
    let banner = b.eval("document.getElementById('error').textContent");
    assert!(
        banner.as_str().unwrap().contains(&err.to_string()),
        "{banner} should name {err}"
    );
    b.wait("document.querySelector('.node.failed')", "the failed field");
    assert_eq!(
        b.eval("document.querySelector('.node.failed .nm').textContent"),
        json!("name")
    );
    let note = b.eval("document.querySelector('.node.failed .errnote').textContent");
    assert!(note.as_str().unwrap().contains(&err.to_string()), "{note}");
    b.wait(
        "window.viewer.field === 'items[1].name'",
        "the failing field selected",
    );
    assert_eq!(b.eval(ROOT_CHILDREN), json!(["count", "items"]));
    // What was read before the cut is in the tree with its values: the first element
    // listed, the second opened on its code beside its failing name.
    let rows = b.eval(
        "[...document.querySelectorAll('.node')].map(r => r.querySelector('.nm').textContent + ' ' + ((r.querySelector('.val') || {}).textContent || ''))",
    );
    let rows: Vec<String> = serde_json::from_value(rows).unwrap();
    for want in [
        "count = 2",
        "[0] ",
        "[1] ",
        "code = 2",
        "name = (reading stopped here)",
    ] {
        assert!(
            rows.iter().any(|r| r.starts_with(want)),
            "{want} in {rows:?}"
        );
    }
    b.wait("document.querySelector('#hex .b.err')", "the error byte");
    assert_eq!(
        b.eval("Number(document.querySelector('#hex .b.err').dataset.o)"),
        json!(err.offset)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Moves the timeline to `t` and waits for that frame to be drawn; a PNG of the 3D view.
fn frame_at(b: &mut Browser, t: f64) -> Vec<u8> {
    let before = b.eval("window.viewer.frames").as_u64().unwrap();
    b.eval(&format!(
        "(() => {{ const s = document.getElementById('scrub'); s.value = {t}; s.dispatchEvent(new Event('input')); }})()"
    ));
    b.wait(
        &format!("window.viewer.frames > {before} && Math.abs(window.viewer.t - {t}) < 1e-9"),
        "the frame",
    );
    b.screenshot(Some("scene"))
}

/// The RPLY crowd at two ticks draws two different frames; selecting an entity jumps the
/// tree to the XFORM op that set its transform.
#[test]
fn rply_timeline_and_entity_link() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("rply");
    let bytes = sample(&rply::FORMAT, Some("study-walk-crowd"));
    let f = write_sample(&dir, "crowd.rply", &bytes);
    let (_p, url) = viewer(&f, &[]);
    b.open(&format!("{url}#pane=motion"));
    b.wait("window.viewer.frames > 0", "the first frame");
    let a = frame_at(&mut b, 20.0);
    let c = frame_at(&mut b, 120.0);
    assert_ne!(a, c, "ticks 20 and 120 draw the same picture");
    keep_shot("viewer-rply-tick20.png", &a);
    keep_shot("viewer-rply-tick120.png", &c);

    b.wait("document.querySelector('.ent')", "the entity list");
    let id = b.eval("document.querySelector('.ent').dataset.id");
    let id: u64 = id.as_str().unwrap().parse().unwrap();
    b.eval("document.querySelector('.ent').click()");
    b.wait("window.viewer.entityLink", "the entity's op");
    let link = b.eval("window.viewer.entityLink");
    let link = link.as_str().unwrap().to_owned();
    b.wait(
        &format!("window.viewer.field === {}", json!(link)),
        "the tree to select the op",
    );
    // The op the tree shows is an XFORM or XFORM_D of that entity.
    let k: usize = link
        .strip_prefix("ops.ops[")
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or_else(|| panic!("{link} is not an op"))
        .parse()
        .unwrap();
    let (_, tree) = (rply::FORMAT.decode_traced)(&bytes);
    let op = &tree.children[1].children[0].children[k];
    let opcode = op.children[0].value.clone().unwrap();
    assert!(opcode.starts_with("xform"), "{link} is {opcode}");
    let body = &op.children[1];
    let ent = body
        .children
        .iter()
        .find(|c| matches!(c.name.as_str(), "entity_id" | "id_wide" | "id_byte"))
        .and_then(|c| c.value.clone())
        .unwrap();
    let ent = if ent == "255" {
        body.children
            .iter()
            .find(|c| c.name == "id_wide")
            .and_then(|c| c.value.clone())
            .unwrap()
    } else {
        ent
    };
    assert_eq!(ent, id.to_string(), "{link} sets entity {ent}");
    // And it is the entity's last such op up to the tick shown (TICK sets the tick,
    // TICK_NEXT adds one).
    let shown = b.eval("window.viewer.t").as_f64().unwrap() as u64;
    let mut tick = 0u64;
    let mut last = None;
    for (i, op) in tree.children[1].children[0].children.iter().enumerate() {
        let code = op.children[0].value.clone().unwrap_or_default();
        let body = op.children.get(1);
        let val = |name: &str| {
            body.and_then(|b| b.children.iter().find(|c| c.name == name))
                .and_then(|c| c.value.clone())
        };
        if code.starts_with("tick_next") {
            tick += 1;
        } else if code.starts_with("tick ") {
            tick = val("tick").unwrap().parse().unwrap();
        } else if tick <= shown {
            let who = if code.starts_with("xform_d") {
                match val("id_byte").as_deref() {
                    Some("255") => val("id_wide"),
                    other => other.map(str::to_owned),
                }
            } else if code.starts_with("xform ") {
                val("entity_id")
            } else {
                None
            };
            if who == Some(id.to_string()) {
                last = Some(i);
            }
        }
    }
    assert_eq!(
        last,
        Some(k),
        "the last op setting entity {id} up to tick {shown}"
    );
    keep_shot("viewer-rply-entity.png", &b.screenshot(None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A file named by environment variable `var`, else `bytes` written into `dir` as `name`.
fn given_or_sample(var: &str, dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => write_sample(dir, name, bytes),
    }
}

/// A SNAP file, a CBTK track, an animation clip and a world snapshot draw their motion, and
/// selecting an entity moves the tree to the node that set its values. The files are small
/// ones built in code; `STATEPACK_VIEW_SNAP` and `STATEPACK_VIEW_CBTK` name others to show
/// instead (the pictures of docs/viewer.md show the CMU walk imported).
#[test]
fn motion_formats_draw_and_link_their_entities() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("motion");
    let snapf = given_or_sample(
        "STATEPACK_VIEW_SNAP",
        &dir,
        "sample.snap",
        &sample(&snap::FORMAT, None),
    );
    let cbtk = given_or_sample(
        "STATEPACK_VIEW_CBTK",
        &dir,
        "example.cbtrack",
        &cbtrack::worked_example_file(),
    );
    let clip = write_sample(&dir, "walk.clip", &sample(&anim_clip::FORMAT, None));
    let wsnap = write_sample(&dir, "tick.wsnap", &sample(&world_snapshot::FORMAT, None));
    for (file, shot) in [
        (snapf, "viewer-snap-motion.png"),
        (cbtk.clone(), "viewer-cbtk.png"),
        (clip, "viewer-clip.png"),
        (wsnap, "viewer-wsnap.png"),
    ] {
        let (_p, url) = viewer(&file, &[]);
        b.open(&format!("{url}#pane=motion"));
        b.wait("window.viewer.frames > 0", "the first frame");
        let n = b.eval("document.querySelectorAll('.ent').length");
        assert!(n.as_u64().unwrap() > 0, "{file:?}: no entities");
        let m = b.eval("window.viewer.info.motion");
        let (t0, t1) = (m["t0"].as_f64().unwrap(), m["t1"].as_f64().unwrap());
        let png = frame_at(&mut b, t0 + (t1 - t0) * 0.4);
        // Selecting an entity moves the tree to the node that set it.
        b.eval("document.querySelector('.ent').click()");
        b.wait("window.viewer.entityLink", "the entity's node");
        let link = b.eval("window.viewer.entityLink");
        b.wait(
            &format!("window.viewer.field === {link}"),
            "the tree to select the entity's node",
        );
        keep_shot(shot, &b.screenshot(None));
        assert!(png.len() > 1000, "{file:?}: an empty picture");
    }
    // The size breakdown lists the file's fields with bars.
    let cbtk_for_sizes = cbtk;
    let (_p, url) = viewer(&cbtk_for_sizes, &[]);
    b.open(&format!("{url}#pane=sizes"));
    b.wait(
        "document.querySelectorAll('#sizes-stored .bar').length > 0",
        "the size bars",
    );
    // Bars are drawn to scale: the largest row's bar is wider than the smallest's.
    let widths = b.eval(
        "[...document.querySelectorAll('#sizes-stored .bar')].map(e => e.getBoundingClientRect().width)",
    );
    let w: Vec<f64> = widths
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(
        w.len() > 1 && w[0] > w[w.len() - 1],
        "bars not to scale: {w:?}"
    );
    keep_shot("viewer-sizes.png", &b.screenshot(None));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The study's keyframe tracks (raw, float32 linear keys, quantised cubic keys) play like a
/// clip: one bone per slot, two frames draw two different pictures, and selecting a bone
/// moves the tree to the key that set its rotation at the frame shown (the frame's values in
/// a raw file).
#[test]
fn study_tracks_play_and_link_their_keys() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("study");
    for (name, bytes) in (study_tracks::FORMAT.samples)() {
        let tracks = study_tracks::read(&bytes).unwrap();
        let f = write_sample(&dir, &format!("{name}.strk"), &bytes);
        let (_p, url) = viewer(&f, &[]);
        b.open(&format!("{url}#pane=motion"));
        b.wait("window.viewer.frames > 0", "the first frame");
        let m = b.eval("window.viewer.info.motion");
        assert_eq!(m["time_unit"], json!("frame"), "{name}");
        assert_eq!(m["t1"], json!(tracks.num_frames - 1), "{name}");
        assert_eq!(
            b.eval("document.querySelectorAll('.ent').length"),
            json!(tracks.stored_bones().len()),
            "{name}: one entity per stored bone"
        );
        let a = frame_at(&mut b, 2.0);
        let shown = 15usize;
        let c = frame_at(&mut b, shown as f64);
        assert_ne!(a, c, "{name}: frames 2 and {shown} draw the same picture");
        // A bone whose rotation is keyed (any bone in a raw file).
        let (bone, want) = match tracks.raw_values {
            Some(_) => {
                let n = (shown * tracks.num_bones + 1) * 10;
                (1, format!("body.values[{n}]"))
            }
            None => {
                let r = tracks
                    .rotations
                    .iter()
                    .find(|r| r.frames.len() > 2)
                    .expect("a keyed rotation");
                let (i, k) = tracks.rotation_key_at(r.bone, shown).unwrap();
                let k = k.unwrap();
                assert!(r.frames[k] <= shown && r.frames[k + 1] > shown);
                (r.bone, format!("body.rotations[{i}].keys[{k}]"))
            }
        };
        b.eval(&format!(
            "document.querySelector('.ent[data-id=\"{bone}\"]').click()"
        ));
        b.wait(
            &format!("window.viewer.entityLink === {}", json!(want)),
            "the bone's key",
        );
        b.wait(
            &format!("window.viewer.field === {}", json!(want)),
            "the tree to select the key",
        );
        if name.contains("linear") {
            keep_shot("viewer-study-tracks.png", &b.screenshot(None));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Figures for docs/performance.md (run by hand, nothing asserted): the time from starting
/// the viewer to its address (reading and indexing the file), from navigating to the page
/// to its first paint and to the tree and hex shown, and the server's peak resident set after
/// the page has shown the structure, played the motion for a while and shown the sizes.
///
/// `STATEPACK_VIEW_FILE` names the file, `STATEPACK_VIEW_EXE` the statepack binary to
/// measure (a release build; default: the one this test was built with). Linux only (the
/// peak is the server's `VmHWM`).
#[test]
#[ignore = "a measurement, run by hand"]
fn first_paint_and_peak_memory_figures() {
    let Some(file) = std::env::var_os("STATEPACK_VIEW_FILE") else {
        eprintln!("set STATEPACK_VIEW_FILE to the file to measure");
        return;
    };
    let exe = std::env::var_os("STATEPACK_VIEW_EXE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_statepack")));
    let Some(mut b) = browser() else { return };
    let start = Instant::now();
    let (p, url) = viewer_with(&exe, Path::new(&file), &[]);
    let to_address = start.elapsed();
    b.open(&url);
    let ready = b.eval("window.viewer.readyMs").as_f64().unwrap();
    let fcp = b.eval(
        "(performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint') || {}).startTime",
    );
    b.eval("document.getElementById('tab-motion').hidden || document.getElementById('tab-motion').click()");
    if b.eval("!!window.viewer.info.motion") == json!(true) {
        b.wait("window.viewer.frames > 0", "the first frame");
        b.eval("document.getElementById('play').click()");
        std::thread::sleep(Duration::from_secs(5));
        b.eval("document.getElementById('play').click()");
    }
    b.eval("document.getElementById('tab-sizes').click()");
    b.wait(
        "document.querySelectorAll('#sizes-stored .bar').length > 0",
        "the sizes",
    );
    let frames = b.eval("window.viewer.frames");
    let status = std::fs::read_to_string(format!("/proc/{}/status", p.0.id())).unwrap();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?")
        .to_owned();
    let len = std::fs::metadata(&file).unwrap().len();
    eprintln!(
        "{}: {len} bytes; address after {:.0} ms; page: first contentful paint {fcp} ms, tree and hex shown {ready:.0} ms after navigation; {frames} motion frames in 5 s; server {hwm}",
        Path::new(&file).display(),
        to_address.as_secs_f64() * 1000.0
    );
}

/// A zlib chunk's inflated bytes get a hex pane of their own, with offsets from their start:
/// selecting the chunk lights its stored bytes in the file's pane and shows the inflated
/// bytes; clicking an inflated byte selects the field read there.
#[test]
fn processed_bytes_get_their_own_pane() {
    let Some(mut b) = browser() else { return };
    let dir = scratch("processed");
    let bytes = cbtrack::worked_example_file();
    let f = write_sample(&dir, "example.cbtrack", &bytes);
    let (_p, url) = viewer(&f, &[]);
    b.open(&url);
    let (_, tree) = (cbtrack::FORMAT.decode_traced)(&bytes);
    let info = tree
        .children
        .iter()
        .find(|c| c.name == "info")
        .expect("the info chunk");
    b.wait(
        &format!("{ROOT_CHILDREN}.includes('info')"),
        "the root's children",
    );
    click_root_child(&mut b, "info");
    b.wait(
        "!document.getElementById('hex2box').hidden && document.querySelector('#hex2 .b')",
        "the inflated bytes' pane",
    );
    b.wait(
        &format!("{HIGHLIGHTED}[0] === {}", info.start),
        "the chunk's stored bytes",
    );
    let want: Vec<u64> = (info.start..info.end).collect();
    assert_eq!(b.eval(HIGHLIGHTED), json!(want));
    // The inflated pane counts from 0; its first byte is the directory's column count.
    assert_eq!(
        b.eval("Number(document.querySelector('#hex2 .b').dataset.o)"),
        json!(0)
    );
    b.eval("document.querySelector('#hex2 .b[data-o=\"0\"]').click()");
    b.wait(
        "window.viewer.field === 'info.directory.num_columns'",
        "the inflated byte's field",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! `statepack view` stays within the CLI's memory bound, 64 bytes per input byte plus the
//! fixed cost of a process, while it answers the page's requests: on a world snapshot of
//! 16 despawn lists of 65,535 one-byte entries (1 MiB, one field per input byte) and on an
//! RPLY crowd (many small ops, several fields each), each served, asked for its tree, a
//! page of a long list, hex, the size breakdown and (RPLY) frames of motion, then stopped.
//!
//! Peak memory is the largest resident set of the processes this test waited for
//! (`getrusage(RUSAGE_CHILDREN)`); this file holds one test so no other test's processes
//! count. The fixed allowance is measured with `statepack --version`.

use statepack::formats::world_snapshot as ws;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn despawn_file() -> Vec<u8> {
    let mut tlv = Vec::new();
    for _ in 0..16 {
        tlv.push(1);
        tlv.extend_from_slice(&u16::MAX.to_le_bytes());
        tlv.extend(std::iter::repeat_n(5u8, usize::from(u16::MAX)));
    }
    let mut b = vec![ws::MSG_TYPE, 0];
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&7u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(tlv.len() as u32).to_le_bytes());
    b.extend_from_slice(&(tlv.len() as u32).to_le_bytes());
    b.extend_from_slice(&tlv);
    b
}

fn crowd_file() -> Vec<u8> {
    let clip = statepack::codecs::motion::walk::study_walk_clip();
    let opts = statepack::sim::rply_crowd::CrowdOptions {
        characters: 20,
        ticks: 3000,
        ..Default::default()
    };
    statepack::sim::rply_crowd::record_crowd(&clip, &opts)
        .expect("the crowd records")
        .bytes
}

/// The largest resident set of any child waited for so far, in bytes.
fn children_peak_bytes() -> u64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage; RUSAGE_CHILDREN is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage failed");
    // Linux reports ru_maxrss in KiB.
    u.ru_maxrss as u64 * 1024
}

/// GET `path` (after the token) from the viewer at `addr`; the body.
fn get(addr: &str, token_path: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    write!(
        s,
        "GET {token_path}{path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 200"), "{path}: {resp:.200}");
    resp.split_once("\r\n\r\n")
        .map(|x| x.1.to_owned())
        .unwrap_or_default()
}

/// Serves `file`, asks for what a page asks for, stops the server.
fn serve_and_browse(file: &std::path::Path, motion: bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .arg("view")
        .arg(file)
        .arg("--no-open")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let mut lines = BufReader::new(out).lines();
    let url = loop {
        let line = lines.next().expect("an address").unwrap();
        if let Some(i) = line.find("http://") {
            break line[i..].split_whitespace().next().unwrap().to_owned();
        }
    };
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, tp) = rest.split_once('/').unwrap();
    let tp = format!("/{tp}");
    let info = get(addr, &tp, "api/info");
    assert!(info.contains("\"failure\":null"), "{info:.300}");
    let root = get(addr, &tp, "api/children?id=0.0");
    // The last child of the root and its last page of children.
    let v: serde_json::Value = serde_json::from_str(&root).unwrap();
    let last = v["children"].as_array().unwrap().last().unwrap();
    let id = last["id"].as_str().unwrap();
    let kids: serde_json::Value =
        serde_json::from_str(&get(addr, &tp, &format!("api/children?id={id}"))).unwrap();
    let total = kids["total"].as_u64().unwrap();
    if let Some(k) = kids["children"].as_array().unwrap().last() {
        let kid = k["id"].as_str().unwrap();
        get(
            addr,
            &tp,
            &format!("api/children?id={kid}&from=0&count=1000"),
        );
    }
    get(
        addr,
        &tp,
        &format!(
            "api/children?id={id}&from={}&count=1000",
            total.saturating_sub(1000)
        ),
    );
    get(addr, &tp, "api/hex?stream=0&offset=4096&len=65536");
    get(addr, &tp, "api/at?stream=0&byte=1000");
    get(addr, &tp, "api/sizes");
    if motion {
        for t in [0, 1500, 2999, 10] {
            get(addr, &tp, &format!("api/frame?t={t}"));
        }
        get(addr, &tp, "api/entity?t=1500&id=1");
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn view_stays_within_64_bytes_per_input_byte() {
    let st = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let fixed = children_peak_bytes();
    let dir = std::env::temp_dir().join(format!("statepack-view-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = vec![
        ("despawns.wsnap", despawn_file(), false),
        ("crowd.rply", crowd_file(), true),
    ];
    // Smallest first: the peak is a maximum over every process so far.
    files.sort_by_key(|f| f.1.len());
    for (name, bytes, motion) in files {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).unwrap();
        serve_and_browse(&path, motion);
        let peak = children_peak_bytes();
        let budget = fixed + 64 * bytes.len() as u64;
        eprintln!(
            "statepack view {name} ({} bytes): peak {peak} bytes, {budget} allowed",
            bytes.len()
        );
        assert!(
            peak <= budget,
            "statepack view {name}: peak {peak} bytes, more than {budget} ({fixed} for the process, 64 per input byte of {})",
            bytes.len()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

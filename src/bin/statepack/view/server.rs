//! The viewer's HTTP side: one thread answering one request at a time (tiny_http), the
//! checks every request passes (loopback `Host`, the token), the embedded page and the JSON
//! endpoints.

use super::structure::Ref;
use super::Doc;
use anyhow::{anyhow, Result};
use serde_json::{json, Value as Json};
use statepack::runtime::io::{unprocess, Processor};
use std::io::Write;
use tiny_http::{Header, Request, Response, Server};

/// The page and its modules, as they are in the repository.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "",
        "text/html; charset=utf-8",
        include_str!("page/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("page/app.js"),
    ),
    (
        "scene.js",
        "text/javascript; charset=utf-8",
        include_str!("page/scene.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("page/style.css"),
    ),
];

/// Children sent per request at most.
const MAX_CHILDREN: u64 = 1000;
/// Hex bytes sent per request at most.
const MAX_HEX: u64 = 64 * 1024;

/// A fresh random token: 16 bytes from the operating system, as 32 hex digits.
pub fn token() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| anyhow!("no random numbers for the token: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Serves `doc` on 127.0.0.1:`port` (0: any free port), prints the address and, when
/// `open` and a desktop is there, opens it in a browser. Runs until the process ends.
pub fn serve(doc: Doc, port: u16, open: bool) -> Result<()> {
    let server = Server::http(("127.0.0.1", port))
        .map_err(|e| anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or_else(|| anyhow!("the server has no IP address"))?;
    let token = token()?;
    let url = format!("http://127.0.0.1:{port}/{token}/");
    let mut out = std::io::stdout();
    writeln!(out, "statepack view: {} ({})", doc.file_name, doc.title)?;
    writeln!(out, "open {url}  (Ctrl-C stops the server)")?;
    out.flush()?;
    if open {
        open_browser(&url);
    }
    let mut state = State {
        doc,
        host: format!("127.0.0.1:{port}"),
        prefix: format!("/{token}/"),
        stream_cache: None,
    };
    for req in server.incoming_requests() {
        state.answer(req);
    }
    Ok(())
}

/// Opens `url` with the desktop's opener, where there is one; says so otherwise.
fn open_browser(url: &str) {
    let cmd: Option<(&str, Vec<&str>)> = if cfg!(target_os = "macos") {
        Some(("open", vec![url]))
    } else if cfg!(windows) {
        Some(("cmd", vec!["/C", "start", "", url]))
    } else if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
    {
        Some(("xdg-open", vec![url]))
    } else {
        None
    };
    let opened = cmd.is_some_and(|(c, a)| {
        std::process::Command::new(c)
            .args(a)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok()
    });
    if !opened {
        eprintln!("(no browser to open here: open the address above in one)");
    }
}

struct State {
    doc: Doc,
    host: String,
    prefix: String,
    /// The processed bytes last inflated: the node whose bytes they are, and the bytes.
    stream_cache: Option<(u32, Vec<u8>)>,
}

fn header(k: &str, v: &str) -> Header {
    Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("ASCII header")
}

fn respond(req: Request, status: u16, ctype: &str, body: Vec<u8>) {
    let resp = Response::from_data(body)
        .with_status_code(status)
        .with_header(header("Content-Type", ctype))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"))
        .with_header(header("Referrer-Policy", "no-referrer"))
        .with_header(header(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
        ));
    // A client that went away is not the server's problem.
    let _ = req.respond(resp);
}

fn text(req: Request, status: u16, msg: &str) {
    respond(
        req,
        status,
        "text/plain; charset=utf-8",
        msg.as_bytes().to_vec(),
    );
}

/// The query's parameters.
fn query(q: &str) -> Vec<(&str, &str)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect()
}

fn param<'q>(q: &[(&str, &'q str)], k: &str) -> Option<&'q str> {
    q.iter().find(|(a, _)| *a == k).map(|(_, v)| *v)
}

fn num(q: &[(&str, &str)], k: &str) -> Result<u64, String> {
    let v = param(q, k).ok_or_else(|| format!("missing `{k}`"))?;
    v.parse().map_err(|_| format!("`{k}` is not a number"))
}

fn float(q: &[(&str, &str)], k: &str) -> Result<f64, String> {
    let v = param(q, k).ok_or_else(|| format!("missing `{k}`"))?;
    let x: f64 = v.parse().map_err(|_| format!("`{k}` is not a number"))?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("`{k}` is not finite"))
    }
}

/// `n.k`: node n, element k of its run.
fn parse_ref(s: &str, ix: &super::structure::Index) -> Result<Ref, String> {
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    let n: u32 = a.parse().map_err(|_| format!("bad node id `{s}`"))?;
    let k: u32 = b.parse().map_err(|_| format!("bad node id `{s}`"))?;
    if n as usize >= ix.len() || k >= ix.node(n).count {
        return Err(format!("no node {s}"));
    }
    Ok((n, k))
}

/// A reference as the page writes it.
pub fn ref_id(r: Ref) -> String {
    format!("{}.{}", r.0, r.1)
}

impl State {
    fn answer(&mut self, req: Request) {
        let host_ok = req
            .headers()
            .iter()
            .filter(|h| h.field.equiv("Host"))
            .map(|h| h.value.as_str())
            .collect::<Vec<_>>()
            == [self.host.as_str()];
        if !host_ok {
            return text(
                req,
                403,
                "refused: the Host header is not the viewer's loopback address",
            );
        }
        if *req.method() != tiny_http::Method::Get {
            return text(req, 405, "only GET");
        }
        let url = req.url().to_owned();
        let Some(rest) = url.strip_prefix(&self.prefix) else {
            return text(req, 404, "not found");
        };
        let (path, q) = rest.split_once('?').unwrap_or((rest, ""));
        if let Some(&(_, ctype, body)) = ASSETS.iter().find(|(p, _, _)| *p == path) {
            return respond(req, 200, ctype, body.as_bytes().to_vec());
        }
        let Some(api) = path.strip_prefix("api/") else {
            return text(req, 404, "not found");
        };
        let q = query(q);
        match self.api(api, &q) {
            Ok(Some(v)) => respond(
                req,
                200,
                "application/json",
                serde_json::to_vec(&v).unwrap_or_default(),
            ),
            Ok(None) => text(req, 404, "not found"),
            Err(e) => respond(
                req,
                400,
                "application/json",
                serde_json::to_vec(&json!({ "error": e })).unwrap_or_default(),
            ),
        }
    }

    fn node_json(&self, r: Ref, values: &std::collections::HashMap<u32, (String, String)>) -> Json {
        let ix = &self.doc.index;
        let n = &ix.node(r.0);
        let (sb, eb) = ix.bits(r);
        let children = ix.child_count(r);
        let ord = ix.ord(r);
        let (ty, value) = match values.get(&ord) {
            Some((t, v)) => (Some(t.clone()), Some(v.clone())),
            None => {
                let t = ix.type_names.get(&ord).cloned().or_else(|| {
                    (children > 0).then(|| {
                        let first = ix.child_nodes(r.0).next();
                        if first.is_some_and(|c| ix.is_element(c)) {
                            format!("list of {children}")
                        } else {
                            "struct".to_owned()
                        }
                    })
                });
                (t, None)
            }
        };
        let failed = ix.failure.as_ref().is_some_and(|f| f.node == r.0);
        let processed = ix
            .child_nodes(r.0)
            .next()
            .is_some_and(|c| ix.node(c).stream == r.0 && r.0 != 0);
        json!({
            "id": ref_id(r),
            "name": if r.0 == 0 { ix.names[0].clone() } else { ix.name(r) },
            "start_bit": sb,
            "end_bit": eb,
            "start": sb / 8,
            "end": eb.div_ceil(8),
            "bits": sb % 8 != 0 || eb % 8 != 0,
            "stream": n.stream,
            "processed": processed,
            "children": children,
            "type": ty,
            "value": value,
            "failed": failed,
        })
    }

    /// The bytes of stream `s`: the file, or the processed bytes of node `s` (inflated from
    /// its stored bytes in its own stream).
    fn stream_bytes(&mut self, s: u32) -> Result<Vec<u8>, String> {
        if s == 0 {
            return Ok(self.doc.bytes.to_vec());
        }
        // Only the cache's copy is kept; the caller's copy lives for one request.
        if let Some((k, b)) = &self.stream_cache {
            if *k == s {
                return Ok(b.clone());
            }
        }
        let ix = &self.doc.index;
        if s as usize >= ix.len() {
            return Err(format!("no stream {s}"));
        }
        let n = ix.node(s);
        if ix.child_nodes(s).next().map(|c| ix.node(c).stream) != Some(s) {
            return Err(format!("node {s} has no processed bytes"));
        }
        let outer = self.stream_bytes(n.stream)?;
        let (a, b) = ((n.start_bit / 8) as usize, (n.end_bit / 8) as usize);
        let stored = outer
            .get(a..b.min(outer.len()))
            .ok_or_else(|| "the processed field lies outside its stream".to_string())?;
        let inflated = unprocess(Processor::Zlib, stored, a as u64)
            .map_err(|e| format!("cannot show the processed bytes: {e}"))?;
        self.stream_cache = Some((s, inflated.clone()));
        Ok(inflated)
    }

    fn api(&mut self, api: &str, q: &[(&str, &str)]) -> Result<Option<Json>, String> {
        let nodes = self.doc.index.len();
        Ok(Some(match api {
            "info" => {
                let ix = &self.doc.index;
                let failure = ix.failure.as_ref().map(|f| {
                    json!({
                        "message": f.message,
                        "path": f.path,
                        "offset": f.offset,
                        "node": ref_id((f.node, 0)),
                    })
                });
                let root = self.node_json((0, 0), &Default::default());
                json!({
                    "file": self.doc.file_name,
                    "size": self.doc.bytes.len(),
                    "title": self.doc.title,
                    "root": root,
                    "failure": failure,
                    "truncated": ix.truncated,
                    "nodes": nodes,
                    "motion": self.doc.motion.as_ref().map(|m| m.info()),
                })
            }
            "children" => {
                let r = parse_ref(param(q, "id").unwrap_or("0.0"), &self.doc.index)?;
                let from = num(q, "from").unwrap_or(0);
                let count = num(q, "count").unwrap_or(200).min(MAX_CHILDREN);
                let ix = &self.doc.index;
                let refs = ix.children(r, from, count);
                let values = ix.values(self.doc.fmt, self.doc.bytes, &refs);
                let list: Vec<Json> = refs.iter().map(|&c| self.node_json(c, &values)).collect();
                json!({ "id": ref_id(r), "from": from, "total": ix.child_count(r), "children": list })
            }
            "node" => {
                let r = parse_ref(param(q, "id").unwrap_or("0.0"), &self.doc.index)?;
                let values = self.doc.index.values(self.doc.fmt, self.doc.bytes, &[r]);
                self.path_json(r, &values)
            }
            "at" => {
                let stream = self.stream_id(q)?;
                let byte = num(q, "byte")?;
                match self.doc.index.at_byte(stream, byte) {
                    Some(r) => {
                        let values = self.doc.index.values(self.doc.fmt, self.doc.bytes, &[r]);
                        self.path_json(r, &values)
                    }
                    None => json!({ "path": [] }),
                }
            }
            "hex" => {
                let stream = if param(q, "stream").is_some() {
                    self.stream_id(q)?
                } else {
                    0
                };
                let offset = num(q, "offset")?;
                let len = num(q, "len")?.min(MAX_HEX);
                let owned;
                let bytes: &[u8] = if stream == 0 {
                    self.doc.bytes
                } else {
                    owned = self.stream_bytes(stream)?;
                    &owned
                };
                let total = bytes.len() as u64;
                let a = offset.min(total) as usize;
                let b = offset.saturating_add(len).min(total) as usize;
                let hex: String = bytes[a..b].iter().map(|x| format!("{x:02x}")).collect();
                json!({ "stream": stream, "offset": a, "total": total, "hex": hex })
            }
            "sizes" => {
                let (stored, inflated) = self.doc.index.sizes(self.doc.bytes.len() as u64);
                json!({ "file_bytes": self.doc.bytes.len(), "stored": stored, "inflated": inflated })
            }
            "frame" => {
                let t = float(q, "t")?;
                let Some(m) = self.doc.motion.as_ref() else {
                    return Ok(None);
                };
                m.frame(t)?
            }
            "entity" => {
                let t = float(q, "t")?;
                let id = num(q, "id")?;
                let Some(m) = self.doc.motion.as_ref() else {
                    return Ok(None);
                };
                let (mut v, link) = m.entity(t, id, &self.doc.index, self.doc.bytes)?;
                if let Some(r) = link {
                    let values = self.doc.index.values(self.doc.fmt, self.doc.bytes, &[r]);
                    v["link"] = self.path_json(r, &values);
                }
                v
            }
            _ => return Ok(None),
        }))
    }

    /// The `stream` parameter: 0 (the file) or a node whose processed bytes hold fields.
    fn stream_id(&self, q: &[(&str, &str)]) -> Result<u32, String> {
        let ix = &self.doc.index;
        let s = u32::try_from(num(q, "stream")?).map_err(|_| "no such stream".to_string())?;
        let opens = (s as usize) < ix.len()
            && ix
                .child_nodes(s)
                .next()
                .is_some_and(|c| ix.node(c).stream == s);
        if s == 0 || opens {
            Ok(s)
        } else {
            Err(format!("no stream {s}"))
        }
    }

    /// A node and its ancestors, each with its position among its parent's children (what
    /// the page needs to reveal it).
    fn path_json(&self, r: Ref, values: &std::collections::HashMap<u32, (String, String)>) -> Json {
        let ix = &self.doc.index;
        let path: Vec<Json> = ix
            .path_to(r)
            .into_iter()
            .map(|(p, pos)| json!({ "id": ref_id(p), "pos": pos }))
            .collect();
        json!({ "path": path, "node": self.node_json(r, values), "field": ix.path_text(r) })
    }
}

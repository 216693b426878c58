// statepack view: the page. Asks the server for what it shows (a page of children, a page
// of hex, one frame of motion); nothing here holds the whole file.
import { Scene } from './scene.js';

const PAGE = 200;          // tree children per page
const HEX_PAGE = 4096;     // bytes per hex request
const ROW_H = 18;          // pixels per hex row
const MAX_VIRTUAL = 8e6;   // tallest scroll area, pixels

const $ = (id) => document.getElementById(id);

async function api(path, params = {}) {
  const r = await fetch('api/' + path + '?' + new URLSearchParams(params));
  const j = await r.json();
  if (!r.ok) throw new Error(j.error || String(r.status));
  return j;
}

// State the page shows; `window.viewer` exposes it (the browser tests read it).
const state = { info: null, selected: null, field: '', entity: null, entityLink: null, t: 0, ready: false, frames: 0 };
window.viewer = state;

function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
}

function rangeText(n) {
  if (n.bits) return `bits ${n.start_bit}..${n.end_bit} (${n.end_bit - n.start_bit} b)`;
  return `${n.start}..${n.end} (${n.end - n.start} B)`;
}

// ---------------------------------------------------------------- hex views

class HexView {
  constructor(el, onByte) {
    this.el = el; this.spacer = el.querySelector('.spacer'); this.rowsEl = el.querySelector('.rows');
    this.stream = 0; this.total = 0; this.pages = new Map(); this.hl = null; this.err = null;
    el.addEventListener('scroll', () => this.render());
    this.rowsEl.addEventListener('click', (e) => {
      const o = e.target.dataset && e.target.dataset.o;
      if (o !== undefined) onByte(this.stream, Number(o));
    });
  }
  async setStream(stream) {
    if (this.total && stream === this.stream) return;
    this.stream = stream; this.pages = new Map(); this.hl = null;
    const first = await api('hex', { stream, offset: 0, len: HEX_PAGE });
    this.total = first.total;
    this.pages.set(0, hexBytes(first.hex));
    this.el.scrollTop = 0;
    this.layout();
  }
  layout() {
    const rows = Math.ceil(this.total / 16);
    this.spacer.style.height = Math.min(rows * ROW_H, MAX_VIRTUAL) + 'px';
    this.render();
  }
  firstRow() {
    const rows = Math.ceil(this.total / 16), h = this.el.clientHeight;
    if (rows * ROW_H <= MAX_VIRTUAL) return Math.floor(this.el.scrollTop / ROW_H);
    const vis = Math.ceil(h / ROW_H);
    const frac = this.el.scrollTop / Math.max(1, MAX_VIRTUAL - h);
    return Math.max(0, Math.floor(frac * Math.max(0, rows - vis)));
  }
  scrollToOffset(off) {
    const rows = Math.ceil(this.total / 16), row = Math.floor(off / 16), h = this.el.clientHeight;
    const vis = Math.ceil(h / ROW_H);
    const want = Math.max(0, row - 3);
    if (rows * ROW_H <= MAX_VIRTUAL) this.el.scrollTop = want * ROW_H;
    else this.el.scrollTop = want / Math.max(1, rows - vis) * (MAX_VIRTUAL - h);
    this.render();
  }
  page(p) {
    const have = this.pages.get(p);
    if (have instanceof Uint8Array) return have;
    if (!have) {
      this.pages.set(p, 'loading');
      api('hex', { stream: this.stream, offset: p * HEX_PAGE, len: HEX_PAGE }).then((j) => {
        this.pages.set(p, hexBytes(j.hex));
        this.render();
      });
    }
    return null;
  }
  render() {
    const rows = Math.ceil(this.total / 16);
    const first = this.firstRow();
    const vis = Math.ceil(this.el.clientHeight / ROW_H) + 2;
    const top = rows * ROW_H <= MAX_VIRTUAL ? first * ROW_H : this.el.scrollTop;
    this.rowsEl.style.top = top + 'px';
    const hl = this.hl, out = [];
    for (let r = first; r < Math.min(rows, first + vis); r++) {
      const off = r * 16;
      const p = Math.floor(off / HEX_PAGE), data = this.page(p);
      let line = `<span class="off">${off.toString(16).padStart(8, '0')}</span>`;
      for (let i = 0; i < 16 && off + i < this.total; i++) {
        const o = off + i;
        let cls = 'b';
        if (hl && o * 8 < hl.endBit && (o + 1) * 8 > hl.startBit) {
          cls += (hl.bits && (o * 8 < hl.startBit || (o + 1) * 8 > hl.endBit)) ? ' selbits' : ' sel';
        }
        if (this.err !== null && o === this.err) cls += ' err';
        const v = data ? data[o - p * HEX_PAGE] : undefined;
        line += `<span class="${cls}" data-o="${o}">${v === undefined ? '··' : v.toString(16).padStart(2, '0')}</span>`;
      }
      out.push(`<div class="row">${line}</div>`);
    }
    this.rowsEl.innerHTML = out.join('');
  }
  highlight(startBit, endBit, bits) {
    this.hl = { startBit, endBit, bits };
    this.scrollToOffset(Math.floor(startBit / 8));
  }
}

function hexBytes(h) {
  const a = new Uint8Array(h.length / 2);
  for (let i = 0; i < a.length; i++) a[i] = parseInt(h.substr(i * 2, 2), 16);
  return a;
}

const hex = new HexView($('hex'), onByte);
const hex2 = new HexView($('hex2'), onByte);

async function onByte(stream, offset) {
  const j = await api('at', { stream, byte: offset });
  if (!j.path.length) {
    $('details').textContent = `byte ${offset}: no field reads it`;
    return;
  }
  await reveal(j.path);
}

// ---------------------------------------------------------------- tree

const wraps = new Map(); // node id -> { el, n, kids, from, loaded }

function makeRow(n) {
  const el = document.createElement('div');
  const row = document.createElement('div');
  row.className = 'node' + (n.failed ? ' failed' : '');
  row.dataset.id = n.id;
  const tog = n.children > 0 ? '▸' : '';
  let html = `<span class="tog">${tog}</span><span class="nm">${esc(n.name)}</span>`;
  if (n.type) html += `<span class="ty">${esc(n.type)}</span>`;
  if (n.value !== null && n.value !== undefined) html += `<span class="val">= ${esc(n.value)}</span>`;
  html += `<span class="rng">${esc(rangeText(n))}${n.stream ? ' in processed bytes' : ''}</span>`;
  if (n.failed && state.info && state.info.failure) html += `<span class="errnote">✖ ${esc(state.info.failure.message)}</span>`;
  row.innerHTML = html;
  const kids = document.createElement('div');
  kids.className = 'kids'; kids.hidden = true;
  el.append(row, kids);
  const w = { el, row, n, kids, from: -1 };
  wraps.set(n.id, w);
  row.addEventListener('click', () => {
    select(n);
    if (n.children > 0) toggle(w);
  });
  return el;
}

async function toggle(w) {
  if (w.kids.hidden) {
    w.kids.hidden = false;
    w.row.querySelector('.tog').textContent = '▾';
    if (w.from < 0) await loadPage(w, 0);
  } else {
    w.kids.hidden = true;
    w.row.querySelector('.tog').textContent = '▸';
  }
}

async function loadPage(w, from) {
  const j = await api('children', { id: w.n.id, from, count: PAGE });
  w.from = from;
  w.kids.innerHTML = '';
  if (from > 0) {
    const prev = document.createElement('div');
    prev.className = 'pager';
    prev.textContent = `◂ elements ${Math.max(0, from - PAGE)}..${from - 1}`;
    prev.addEventListener('click', () => loadPage(w, Math.max(0, from - PAGE)));
    w.kids.append(prev);
  }
  for (const c of j.children) w.kids.append(makeRow(c));
  const end = from + j.children.length;
  if (end < j.total) {
    const next = document.createElement('div');
    next.className = 'pager';
    next.textContent = `▸ elements ${end}..${Math.min(j.total, end + PAGE) - 1} (of ${j.total})`;
    next.addEventListener('click', () => loadPage(w, end));
    w.kids.append(next);
  }
}

// Opens the tree along `path` (root first, each with its position in its parent) and
// selects its last node.
async function reveal(path) {
  for (let i = 0; i + 1 < path.length; i++) {
    const w = wraps.get(path[i].id);
    if (!w) return;
    const from = Math.floor(path[i + 1].pos / PAGE) * PAGE;
    w.kids.hidden = false;
    w.row.querySelector('.tog').textContent = '▾';
    if (w.from !== from) await loadPage(w, from);
  }
  const last = wraps.get(path[path.length - 1].id);
  if (last) {
    select(last.n);
    last.row.scrollIntoView({ block: 'center' });
  }
}

async function select(n) {
  for (const r of document.querySelectorAll('.node.selected')) r.classList.remove('selected');
  const w = wraps.get(n.id);
  if (w) w.row.classList.add('selected');
  state.selected = n;
  const det = await api('node', { id: n.id }).catch(() => null);
  state.field = det ? det.field : '';
  const lines = [`${state.field || n.name}`, `type: ${n.type || '-'}`];
  if (det && det.node.value !== null) lines.push(`value: ${det.node.value}`);
  lines.push(`bytes ${n.start}..${n.end} (${n.end - n.start} B), bits ${n.start_bit}..${n.end_bit}`);
  if (n.stream) lines.push(`offsets count from the start of the processed bytes of node ${n.stream}`);
  if (n.failed && state.info.failure) lines.push(`error: ${state.info.failure.message}`);
  $('details').textContent = lines.join('\n');
  if (n.stream === 0) {
    hex.highlight(n.start_bit, n.end_bit, n.bits);
    if (n.processed) {
      await showStream(Number(n.id.split('.')[0]), null);
    } else {
      $('hex2box').hidden = true;
    }
  } else {
    await showStream(n.stream, n);
  }
}

// Shows the processed bytes of node `s` in their own pane, highlighting `n` there, and the
// processed field's stored bytes in the file's pane.
async function showStream(s, n) {
  $('hex2box').hidden = false;
  try {
    await hex2.setStream(s);
  } catch (e) {
    $('hex2head').textContent = String(e.message);
    return;
  }
  const owner = await api('node', { id: s + '.0' });
  $('hex2head').textContent = `processed bytes of ${owner.field} (${hex2.total} bytes, offsets from their start)`;
  if (owner.node.stream === 0) hex.highlight(owner.node.start_bit, owner.node.end_bit, false);
  if (n) hex2.highlight(n.start_bit, n.end_bit, n.bits);
  else { hex2.hl = null; hex2.scrollToOffset(0); }
}

// ---------------------------------------------------------------- motion

let scene = null, playing = false, inflight = false, pending = null, lastTs = 0, entIds = '';

function timeText(t) {
  const m = state.info.motion;
  const v = m.time_unit === 's' ? t.toFixed(3) : m.time_unit === 'ms' ? t.toFixed(0) : Math.round(t);
  return `${m.time_unit} ${v} of ${m.t1}`;
}

function requestFrame(t) {
  pending = t;
  if (inflight) return;
  const go = async () => {
    inflight = true;
    const want = pending; pending = null;
    try {
      const f = await api('frame', { t: want });
      state.t = want;
      state.frames++;
      scene.setFrame(f.entities, state.entity);
      $('time').textContent = timeText(want);
      $('scrub').value = want;
      const ids = f.entities.map((e) => e.id).join(',');
      if (ids !== entIds) { entIds = ids; listEntities(f.entities); }
    } catch (e) {
      $('scenenote').textContent = String(e.message);
    }
    inflight = false;
    if (pending !== null) go();
  };
  go();
}

function listEntities(ents) {
  const box = $('entities');
  box.innerHTML = '';
  for (const e of ents.slice(0, 1000)) {
    const d = document.createElement('div');
    d.className = 'ent' + (String(e.id) === String(state.entity) ? ' selected' : '');
    d.dataset.id = e.id;
    d.textContent = e.label;
    d.addEventListener('click', () => selectEntity(e.id));
    box.append(d);
  }
}

async function selectEntity(id) {
  state.entity = id;
  for (const d of document.querySelectorAll('.ent')) d.classList.toggle('selected', d.dataset.id === String(id));
  scene.setFrame(scene.entities, id);
  let j;
  try {
    j = await api('entity', { id, t: state.t });
  } catch (e) {
    $('entity').textContent = String(e.message);
    return;
  }
  const link = j.link;
  delete j.link;
  $('entity').textContent = JSON.stringify(j, null, 1);
  state.entityLink = link ? link.field : null;
  if (link) {
    const a = document.createElement('div');
    a.className = 'pager';
    a.textContent = `show ${link.field} in the structure`;
    a.addEventListener('click', () => showPane('structure'));
    $('entity').append(a);
    await reveal(link.path);
  }
}

async function initMotion() {
  if (scene) return;
  const m = state.info.motion;
  try {
    scene = new Scene($('scene'), m.unit, m.min_extent);
  } catch (e) {
    $('scenenote').textContent = String(e.message);
    return;
  }
  // Frame the camera on where the entities go over the whole timeline (a few samples).
  const seen = [];
  for (let i = 0; i <= 6; i++) {
    const f = await api('frame', { t: m.t0 + (m.t1 - m.t0) * i / 6 }).catch(() => null);
    if (f) seen.push(...f.entities);
  }
  scene.fit(seen);
  scene.onPick = selectEntity;
  scene.onDraw = () => { $('scenenote').textContent = `${scene.gridLabel} · ${m.what} · drag to orbit, wheel to zoom`; };
  const sc = $('scrub');
  sc.min = m.t0; sc.max = m.t1;
  sc.addEventListener('input', () => requestFrame(Number(sc.value)));
  $('step').addEventListener('click', () => {
    playing = false; $('play').textContent = 'Play';
    requestFrame(Math.min(m.t1, state.t + m.step));
  });
  $('play').addEventListener('click', () => {
    playing = !playing;
    $('play').textContent = playing ? 'Pause' : 'Play';
    lastTs = performance.now();
    if (playing) requestAnimationFrame(tick);
  });
  requestFrame(m.t0);
}

function tick(ts) {
  if (!playing) return;
  const m = state.info.motion;
  const dt = (ts - lastTs) / 1000; lastTs = ts;
  let t = (pending ?? state.t) + dt * m.per_second * Number($('speed').value);
  if (t > m.t1) t = m.t0;
  if (!inflight) requestFrame(t); else pending = t;
  requestAnimationFrame(tick);
}

// ---------------------------------------------------------------- sizes

let sizesShown = false;

async function showSizes() {
  if (sizesShown) return;
  sizesShown = true;
  const j = await api('sizes');
  const bars = (el, rows, total) => {
    const top = rows.slice(0, 40);
    const rest = rows.slice(40).reduce((s, r) => s + r.bytes, 0);
    if (rest > 0) top.push({ field: `(${rows.length - 40} other fields)`, bytes: rest });
    const max = Math.max(...top.map((r) => r.bytes), 1);
    el.innerHTML = '';
    for (const r of top) {
      const lbl = document.createElement('div');
      lbl.className = 'lbl'; lbl.title = r.field; lbl.textContent = r.field || '(root)';
      const cell = document.createElement('div');
      const bar = document.createElement('div');
      bar.className = 'bar';
      // Set through the style object: the page's CSP refuses inline style attributes.
      bar.style.width = (100 * r.bytes / max).toFixed(2) + '%';
      cell.append(bar);
      const num = document.createElement('div');
      num.className = 'num';
      num.textContent = `${Math.round(r.bytes).toLocaleString('en')} B · ${(100 * r.bytes / total).toFixed(1)}%`;
      el.append(lbl, cell, num);
    }
  };
  bars($('sizes-stored'), j.stored, j.file_bytes);
  if (j.inflated.length) {
    $('sizes-inflated-head').hidden = false;
    const tot = j.inflated.reduce((s, r) => s + r.bytes, 0);
    bars($('sizes-inflated'), j.inflated, tot);
  }
}

// ---------------------------------------------------------------- start

function showPane(name) {
  for (const b of document.querySelectorAll('.tab')) b.classList.toggle('active', b.dataset.pane === name);
  for (const p of document.querySelectorAll('.pane')) p.classList.toggle('active', p.id === 'pane-' + name);
  if (name === 'motion') initMotion();
  if (name === 'sizes') showSizes();
  if (name === 'structure') { hex.render(); hex2.render(); }
}

async function start() {
  const info = await api('info');
  state.info = info;
  document.title = `${info.file} · statepack view`;
  $('title').textContent = info.title;
  $('fileinfo').textContent = `${info.file} · ${info.size.toLocaleString('en')} bytes`;
  for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => showPane(b.dataset.pane));
  if (info.motion) $('tab-motion').hidden = false;
  const tree = $('tree');
  tree.append(makeRow(info.root));
  await hex.setStream(0);
  await toggle(wraps.get(info.root.id));
  if (info.failure) {
    const f = info.failure;
    $('error').hidden = false;
    $('error').textContent = `This file does not decode: ${f.message}. The tree shows what was read up to there.`;
    hex.err = f.offset;
    const j = await api('node', { id: f.node });
    await reveal(j.path);
    hex.scrollToOffset(f.offset);
  } else if (info.truncated) {
    $('error').hidden = false;
    $('error').textContent = `The file has more fields than the viewer indexes (${info.nodes.toLocaleString('en')}); the tree stops there.`;
  }
  state.readyMs = performance.now();
  state.ready = true;
  const want = new URLSearchParams(location.hash.slice(1)).get('pane');
  if (want) showPane(want);
}

start().catch((e) => {
  $('error').hidden = false;
  $('error').textContent = String(e.message || e);
});

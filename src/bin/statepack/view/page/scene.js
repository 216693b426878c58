// The motion view: a small WebGL renderer of a ground grid, entities (points, oriented
// boxes, bones) with their orientation axes and trails, and an orbit camera.

const VS = `
attribute vec3 p;
attribute vec3 c;
uniform mat4 m;
uniform float ps;
varying vec3 vc;
void main() { gl_Position = m * vec4(p, 1.0); gl_PointSize = ps; vc = c; }`;
const FS = `
precision mediump float;
varying vec3 vc;
void main() { gl_FragColor = vec4(vc, 1.0); }`;

function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}

function lookAt(eye, at, up) {
  let z = [eye[0] - at[0], eye[1] - at[1], eye[2] - at[2]];
  const zl = Math.hypot(...z) || 1; z = z.map(v => v / zl);
  let x = [up[1] * z[2] - up[2] * z[1], up[2] * z[0] - up[0] * z[2], up[0] * z[1] - up[1] * z[0]];
  const xl = Math.hypot(...x) || 1; x = x.map(v => v / xl);
  const y = [z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]];
  const d = (a) => a[0] * eye[0] + a[1] * eye[1] + a[2] * eye[2];
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -d(x), -d(y), -d(z), 1];
}

function mul(a, b) {
  const o = new Array(16).fill(0);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) {
    let s = 0;
    for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
    o[c * 4 + r] = s;
  }
  return o;
}

function rotate(q, v) {
  const [x, y, z, w] = q;
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

function hue(id) {
  const h = ((id * 0.618034) % 1 + 1) % 1;
  const f = (n) => { const k = (n + h * 6) % 6; return 0.55 + 0.4 * Math.max(0, Math.min(1, Math.min(k, 4 - k))); };
  return [f(5), f(3), f(1)];
}

function niceStep(x) {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-9))));
  for (const m of [1, 2, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

export class Scene {
  constructor(canvas, unit, minExtent) {
    this.canvas = canvas;
    this.unit = unit;
    this.minExtent = minExtent || 1;
    const gl = canvas.getContext('webgl', { preserveDrawingBuffer: true, antialias: true });
    if (!gl) throw new Error('WebGL is not available in this browser');
    this.gl = gl;
    const sh = (type, src) => {
      const s = gl.createShader(type);
      gl.shaderSource(s, src); gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    };
    const prog = gl.createProgram();
    gl.attachShader(prog, sh(gl.VERTEX_SHADER, VS));
    gl.attachShader(prog, sh(gl.FRAGMENT_SHADER, FS));
    gl.linkProgram(prog);
    if (!gl.getProgramParameter(prog, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(prog));
    this.prog = prog;
    this.loc = {
      p: gl.getAttribLocation(prog, 'p'), c: gl.getAttribLocation(prog, 'c'),
      m: gl.getUniformLocation(prog, 'm'), ps: gl.getUniformLocation(prog, 'ps'),
    };
    this.buf = gl.createBuffer();
    this.yaw = 0.7; this.pitch = 0.6; this.dist = 10; this.target = [0, 0, 0];
    this.ground = 0; this.size = 1; this.fitted = false;
    this.entities = []; this.selected = null; this.matrix = null;
    this.bindMouse();
  }

  bindMouse() {
    let drag = null, moved = false;
    this.canvas.addEventListener('mousedown', (e) => { drag = [e.clientX, e.clientY]; moved = false; });
    window.addEventListener('mouseup', () => { drag = null; });
    window.addEventListener('mousemove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag[0], dy = e.clientY - drag[1];
      if (Math.abs(dx) + Math.abs(dy) > 2) moved = true;
      drag = [e.clientX, e.clientY];
      this.yaw -= dx * 0.01;
      this.pitch = Math.max(-1.5, Math.min(1.5, this.pitch + dy * 0.01));
      this.draw();
    });
    this.canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.dist *= Math.exp(e.deltaY * 0.001);
      this.draw();
    }, { passive: false });
    this.canvas.addEventListener('click', (e) => {
      if (moved) return;
      const r = this.canvas.getBoundingClientRect();
      const id = this.pick(e.clientX - r.left, e.clientY - r.top);
      if (id !== null && this.onPick) this.onPick(id);
    });
  }

  // Frames the camera on the entities (once, on the first frame that has any).
  fit(entities) {
    const pts = [];
    for (const e of entities) { pts.push(e.p); for (const t of e.trail || []) pts.push(t); }
    if (!pts.length) return;
    const lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
    for (const p of pts) for (let i = 0; i < 3; i++) {
      if (Number.isFinite(p[i])) { lo[i] = Math.min(lo[i], p[i]); hi[i] = Math.max(hi[i], p[i]); }
    }
    if (!Number.isFinite(lo[0])) return;
    this.target = [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
    const r = Math.max(Math.hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]) / 2, this.minExtent / 2);
    this.size = r;
    this.dist = r * 2.8;
    this.ground = lo[1];
    this.gridStep = niceStep(r / 4);
    this.fitted = true;
  }

  setFrame(entities, selected) {
    this.entities = entities;
    this.selected = selected;
    if (!this.fitted) this.fit(entities);
    this.draw();
  }

  draw() {
    const gl = this.gl, cv = this.canvas;
    gl.viewport(0, 0, cv.width, cv.height);
    gl.clearColor(0.063, 0.075, 0.11, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    const t = this.target;
    const eye = [
      t[0] + this.dist * Math.cos(this.pitch) * Math.sin(this.yaw),
      t[1] + this.dist * Math.sin(this.pitch),
      t[2] + this.dist * Math.cos(this.pitch) * Math.cos(this.yaw),
    ];
    const proj = perspective(0.9, cv.width / cv.height, this.dist * 0.01, this.dist * 20);
    // Vertices are sent relative to the camera's target, so float32 keeps their precision
    // far from the origin (world snapshots sit millions of metres out).
    const rel = (p) => [p[0] - t[0], p[1] - t[1], p[2] - t[2]];
    const view = mul(proj, lookAt(rel(eye), [0, 0, 0], [0, 1, 0]));
    this.matrix = mul(view, [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -t[0], -t[1], -t[2], 1]);
    const lines = [], points = [];
    const line = (a, b, c) => { lines.push(...rel(a), ...c, ...rel(b), ...c); };
    // Ground grid.
    const step = this.gridStep || 1, n = 10, g = this.ground;
    const cx = Math.round(t[0] / step) * step, cz = Math.round(t[2] / step) * step;
    const gc = [0.22, 0.25, 0.33];
    for (let i = -n; i <= n; i++) {
      line([cx + i * step, g, cz - n * step], [cx + i * step, g, cz + n * step], gc);
      line([cx - n * step, g, cz + i * step], [cx + n * step, g, cz + i * step], gc);
    }
    const s = this.size * 0.03;
    for (const e of this.entities) {
      if (!e.p.every(Number.isFinite)) continue;
      const sel = this.selected !== null && String(e.id) === String(this.selected);
      const col = sel ? [1, 0.85, 0.2] : hue(Number(e.id) % 9973);
      const q = e.q && e.q.every(Number.isFinite) ? e.q : [0, 0, 0, 1];
      const tr = e.trail || [];
      for (let i = 1; i < tr.length; i++) line(tr[i - 1], tr[i], col.map(v => v * 0.6));
      if (e.point) { points.push(...rel(e.p), ...col); continue; }
      if (e.box || e.bone) {
        const k = e.bone ? s * 0.6 : s;
        const corner = (i) => {
          const v = rotate(q, [(i & 1 ? k : -k), (i & 2 ? k : -k), (i & 4 ? k : -k)]);
          return [e.p[0] + v[0], e.p[1] + v[1], e.p[2] + v[2]];
        };
        for (const [a, b] of [[0, 1], [2, 3], [4, 5], [6, 7], [0, 2], [1, 3], [4, 6], [5, 7], [0, 4], [1, 5], [2, 6], [3, 7]]) {
          line(corner(a), corner(b), col);
        }
      } else {
        points.push(...rel(e.p), ...col);
      }
      // Orientation: the entity's forward (z) and up (y) axes.
      const f = rotate(q, [0, 0, s * 3]), u = rotate(q, [0, s * 2, 0]);
      line(e.p, [e.p[0] + f[0], e.p[1] + f[1], e.p[2] + f[2]], [0.95, 0.4, 0.35]);
      line(e.p, [e.p[0] + u[0], e.p[1] + u[1], e.p[2] + u[2]], [0.4, 0.9, 0.5]);
    }
    gl.useProgram(this.prog);
    gl.uniformMatrix4fv(this.loc.m, false, new Float32Array(view));
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buf);
    const drawArr = (arr, mode, ps) => {
      if (!arr.length) return;
      gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(arr), gl.STREAM_DRAW);
      gl.enableVertexAttribArray(this.loc.p);
      gl.enableVertexAttribArray(this.loc.c);
      gl.vertexAttribPointer(this.loc.p, 3, gl.FLOAT, false, 24, 0);
      gl.vertexAttribPointer(this.loc.c, 3, gl.FLOAT, false, 24, 12);
      gl.uniform1f(this.loc.ps, ps);
      gl.drawArrays(mode, 0, arr.length / 6);
    };
    drawArr(lines, gl.LINES, 1);
    drawArr(points, gl.POINTS, 7);
    this.gridLabel = `grid: ${step} ${this.unit}`;
    if (this.onDraw) this.onDraw();
  }

  // The entity drawn nearest to canvas point (x, y), within 14 pixels, or null.
  pick(x, y) {
    if (!this.matrix) return null;
    const m = this.matrix, w = this.canvas.width, h = this.canvas.height;
    let best = null, bd = 14 * 14;
    for (const e of this.entities) {
      const p = e.p;
      const cx = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
      const cy = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
      const cw = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
      if (cw <= 0) continue;
      const sx = (cx / cw * 0.5 + 0.5) * w, sy = (1 - (cy / cw * 0.5 + 0.5)) * h;
      const d = (sx - x) ** 2 + (sy - y) ** 2;
      if (d < bd) { bd = d; best = e.id; }
    }
    return best;
  }
}

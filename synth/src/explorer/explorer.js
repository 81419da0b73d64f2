// synth explorer: renders the embedded suite data (see synth/src/explorer/mod.rs).
// State lives in the URL fragment: #test=NAME&model=MODEL&config=..&vm=..&vv=..&bucket=..&idiom=..&launch=..&lit=..&q=..
// Kernel programs (DATA.kernels) follow the tests in the list; their key is
// "k:" + name (a plain name finds one too when no test has that name).
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const M = DATA.models; // CSV names, Model::ALL order
  const byName = new Map(DATA.tests.map((t, i) => [t.n, i]));
  const $ = (id) => document.getElementById(id);
  const SVGNS = "http://www.w3.org/2000/svg";
  const THREAD_COLOURS = ["#1a5fb4", "#26a269", "#9141ac", "#c64600", "#613583", "#0b7285", "#a51d2d", "#5e5c64"];
  // Display order of the verdict table: unfair, then weak and strong chains.
  const ORDER = ["UNFAIR", "HSA", "OBE", "HSA_OBE", "LOBE", "WEAK_FAIR",
    "HSA_STRONG", "OBE_STRONG", "HSA_OBE_STRONG", "LOBE_STRONG", "STRONG_FAIR"];
  const pretty = (name) => DATA.pretty[M.indexOf(name)];
  // Unpack what the page embeds compactly: pseudo-code lines by index, and
  // witnesses as [kind, c, r, x, seven numbers per event...].
  for (const t of DATA.tests) {
    t.p = t.p.map((th) => th.map((k) => DATA.lines[k]));
    t.w = t.w.map((f) => {
      const w = { k: f[0] ? "trap" : "lasso", c: f[1], e: [] };
      if (f[2] >= 0) w.r = f[2];
      if (f[3] >= 0) w.x = f[3];
      for (let i = 4; i < f.length; i += 7) w.e.push(f.slice(i, i + 7));
      return w;
    });
  }
  const KERNELS = DATA.kernels || [];
  for (const t of DATA.tests) t.key = t.n;
  for (const k of KERNELS) {
    k.kernel = true;
    k.key = "k:" + k.n;
    k.d = "";
    k.cf = [];
    k.i = [];
    // What the literature filter matches: how the oracle's verdicts meet
    // the verdicts the file states.
    const said = k.r.filter((r) => r.a);
    k.litv = !said.length ? "none" : said.some((r) => r.a === "no") ? "disagrees"
      : said.some((r) => r.a === "undecided") ? "undecided" : "agrees";
  }
  const ITEMS = DATA.tests.concat(KERNELS);
  const byKey = new Map(ITEMS.map((t, i) => [t.key, i]));
  const indexOf = (key) => {
    const i = byKey.get(key);
    return i !== undefined ? i : byKey.get("k:" + key);
  };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function sel(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setOptions(select, opts) {
    select.textContent = "";
    for (const [v, label] of opts) select.appendChild(el("option", { value: v }, label));
  }
  const threadsOf = (t) => t.p.length;
  function showSet(mask) {
    const ids = [];
    for (let i = 0; i < 8; i++) if (mask & (1 << i)) ids.push(i);
    return "{" + ids.join(",") + "}";
  }
  // "01.0x" -> "Mem=[0,1] pc=[0,END]", as progress_litmus::axb::machine::Machine::describe.
  function describe(s) {
    const [mem, pcs] = s.split(".");
    const m = [...mem].map((c) => parseInt(c, 16));
    const p = [...pcs].map((c) => (c === "x" ? "END" : String(parseInt(c, 16))));
    return "Mem=[" + m.join(",") + "] pc=[" + p.join(",") + "]";
  }

  // ---- the fragment ----------------------------------------------------
  function readHash() {
    const h = {};
    for (const part of location.hash.replace(/^#/, "").split("&")) {
      if (!part) continue;
      const i = part.indexOf("=");
      const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
      h[k] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
    }
    return h;
  }
  let state = readHash();
  function writeHash() {
    const parts = [];
    for (const k of ["test", "model", "config", "vm", "vv", "bucket", "idiom", "launch", "lit", "q", "target", "mapping"]) {
      if (state[k]) parts.push(k + "=" + encodeURIComponent(state[k]));
    }
    history.replaceState(null, "", "#" + parts.join("&"));
  }

  // ---- filters and list --------------------------------------------------
  function initFilters() {
    $("suite").textContent = DATA.suite;
    $("note").textContent = DATA.note;
    document.title = DATA.suite + ": progress litmus test explorer";
    const configs = [...new Set(ITEMS.map((t) => t.c))];
    setOptions($("f-config"), [["", "all"], ...configs.map((c) => [c, c])]);
    setOptions($("f-vmodel"), [["", "model…"], ...ORDER.map((m) => [m, pretty(m)])]);
    const buckets = [["", "any"]];
    for (const m of DATA.table4) buckets.push(["D:" + m, "bucket D (distinguishing) " + pretty(m)]);
    for (const m of DATA.table4) buckets.push(["C:" + m, "bucket C " + pretty(m)]);
    buckets.push(["none", "in no bucket"]);
    setOptions($("f-bucket"), buckets);
    setOptions($("f-idiom"), [["", "any"], ["*", "some idiom"], ...DATA.idioms.map(([t, title]) => [t, title])]);
    const launches = [...new Set(KERNELS.map((k) => k.launch))].sort();
    setOptions($("f-launch"), [["", "any"], ...launches.map((l) => [l, l])]);
    // The filters that fit what the page holds: configuration, Table 4
    // bucket and idiom are AXB tests' (on a page of kernel programs alone
    // they would select none); launch and literature are kernel programs'.
    for (const e of document.querySelectorAll(".axb-filter")) e.hidden = !DATA.tests.length;
    for (const e of document.querySelectorAll(".kernel-filter")) e.hidden = !KERNELS.length;
    if (ITEMS.length) $("f-name").placeholder = "e.g. " + ITEMS[0].n;
    const bind = (id, key) => {
      const e = $(id);
      e.value = state[key] || "";
      e.addEventListener(id === "f-name" ? "input" : "change", () => {
        state[key] = e.value;
        writeHash();
        renderList();
      });
    };
    bind("f-config", "config");
    bind("f-vmodel", "vm");
    bind("f-verdict", "vv");
    bind("f-bucket", "bucket");
    bind("f-idiom", "idiom");
    bind("f-launch", "launch");
    bind("f-lit", "lit");
    bind("f-name", "q");
  }

  function matches(t) {
    if (state.config && t.c !== state.config) return false;
    if (state.vm && state.vv) {
      const k = M.indexOf(state.vm);
      if (k >= 0 && t.v[k] !== state.vv) return false;
    }
    if (state.bucket) {
      const b = state.bucket;
      if (b === "none" ? t.d !== "" : b.startsWith("D:") ? t.d !== b.slice(2) : !t.cf.includes(b.slice(2))) return false;
    }
    if (state.idiom) {
      if (state.idiom === "*" ? t.i.length === 0 : !t.i.includes(state.idiom)) return false;
    }
    if (state.launch && t.launch !== state.launch) return false;
    if (state.lit && t.litv !== state.lit) return false;
    if (state.q && !t.n.toLowerCase().includes(state.q.toLowerCase())) return false;
    return true;
  }

  function renderList() {
    const list = $("list");
    list.textContent = "";
    let n = 0, nk = 0;
    const frag = document.createDocumentFragment();
    for (const t of ITEMS) {
      if (!matches(t)) continue;
      n++;
      if (t.kernel) nk++;
      const li = el("li", { "data-name": t.key });
      li.appendChild(el("span", {}, t.n + (t.kernel ? " ◆" : t.i.length ? " ★" : "")));
      li.appendChild(el("span", { class: "v", title: "verdicts: " + ORDER.join(" ") }, ORDER.map((m) => t.v[M.indexOf(m)]).join("")));
      if (t.key === state.test) li.className = "sel";
      frag.appendChild(li);
    }
    list.appendChild(frag);
    $("count").textContent = String(n);
    $("count-word").textContent = countWords(n, nk);
  }

  // What the count counts: "tests", "kernel programs", or both.
  function countWords(n, nk) {
    const plural = (k, one, many) => (k === 1 ? one : many);
    if (!KERNELS.length) return plural(n, "test", "tests");
    if (!DATA.tests.length) return plural(n, "kernel program", "kernel programs");
    return `shown: ${n - nk} ${plural(n - nk, "test", "tests")}, ${nk} ${plural(nk, "kernel program", "kernel programs")}`;
  }

  // ---- layout ------------------------------------------------------------
  const NW = 104, NH = 30, HS = 168, VS = 78, PAD = 40;
  // Layers by breadth-first depth from the initial state (node 0), each
  // layer ordered by the mean position of its predecessors in earlier
  // layers (ties: node order). Deterministic.
  function layout(t) {
    const n = t.s.length, T = threadsOf(t);
    const depth = new Array(n).fill(-1);
    depth[0] = 0;
    const queue = [0];
    for (let q = 0; q < queue.length; q++) {
      const u = queue[q];
      for (let th = 0; th < T; th++) {
        const v = t.g[u * T + th];
        if (v >= 0 && depth[v] < 0) { depth[v] = depth[u] + 1; queue.push(v); }
      }
    }
    const layers = [];
    for (const u of queue) (layers[depth[u]] = layers[depth[u]] || []).push(u);
    const preds = Array.from({ length: n }, () => []);
    for (let u = 0; u < n; u++) for (let th = 0; th < T; th++) {
      const v = t.g[u * T + th];
      if (v >= 0 && depth[u] < depth[v]) preds[v].push(u);
    }
    const pos = new Array(n).fill(0);
    const width = Math.max(...layers.map((l) => l.length));
    layers.forEach((layer, d) => {
      if (d > 0) {
        const key = (v) => preds[v].length ? preds[v].reduce((a, u) => a + pos[u], 0) / preds[v].length : 0;
        const keyed = layer.map((v, i) => [key(v), i, v]);
        keyed.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        layer.splice(0, layer.length, ...keyed.map((k) => k[2]));
      }
      layer.forEach((v, i) => { pos[v] = i - (layer.length - 1) / 2; });
    });
    const x = (v) => PAD + (pos[v] + (width - 1) / 2) * HS + NW / 2;
    const y = (v) => PAD + depth[v] * VS + NH / 2;
    return { x, y, depth, W: PAD * 2 + (width - 1) * HS + NW + 60, H: PAD * 2 + (layers.length - 1) * VS + NH };
  }

  // ---- the picture ---------------------------------------------------------
  // Which program transitions and states a witness visits: a Step of thread
  // th from node u is the transition (u, th); a Terminate does not move.
  function project(t, w) {
    const pre = new Set(), cyc = new Set(), nodes = new Set([0]);
    let cur = 0, trap = -1;
    w.e.forEach((ev, k) => {
      if (w.r !== undefined && k === w.r) trap = cur;
      if (ev[1] >= 0) (k < w.c ? pre : cyc).add(cur + ":" + ev[0]);
      cur = ev[4];
      nodes.add(cur);
    });
    if (w.r !== undefined && w.r === w.e.length) trap = cur;
    return { pre, cyc, nodes, trap };
  }

  function drawGraph(t, w) {
    const T = threadsOf(t), L = layout(t), box = $("graph");
    box.textContent = "";
    const hi = w ? project(t, w) : null;
    const svg = sel("svg", { id: "lts", width: L.W, height: L.H, viewBox: "0 0 " + L.W + " " + L.H, "data-test": t.n });
    const defs = sel("defs");
    for (const [id, colour] of [["a", "#9aa1ae"], ["awp", "#e8710a"], ["awc", "#c5221f"]]) {
      const m = sel("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
      m.appendChild(sel("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }));
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    const edges = sel("g", { id: "edges" }), labels = sel("g"), nodes = sel("g", { id: "nodes" });
    let count = 0;
    const loops = new Map(), pairs = new Map();
    for (let u = 0; u < t.s.length; u++) for (let th = 0; th < T; th++) {
      const v = t.g[u * T + th];
      if (v < 0) continue;
      count++;
      const key = u + ":" + th;
      const cls = hi && hi.cyc.has(key) ? "wc" : hi && hi.pre.has(key) ? "wp" : "";
      const x1 = L.x(u), y1 = L.y(u), x2 = L.x(v), y2 = L.y(v);
      let d, lx, ly;
      if (u === v) {
        const k = loops.get(u) || 0; loops.set(u, k + 1);
        // Loops sit in the gap to the right of the node, nested when a
        // state has several (one per thread that spins there).
        const r = 12 + 8 * k, sx = x1 + NW / 2;
        d = `M${sx},${y1 - 5} C${sx + 1.6 * r},${y1 - r - 5} ${sx + 1.6 * r},${y1 + r + 5} ${sx},${y1 + 5}`;
        lx = sx + 1.2 * r + 3; ly = y1 + 3;
      } else {
        const pk = Math.min(u, v) + "-" + Math.max(u, v);
        const k = pairs.get(pk) || 0; pairs.set(pk, k + 1);
        const down = L.depth[v] === L.depth[u] + 1;
        const sy = down ? y1 + NH / 2 : y1, ey = down ? y2 - NH / 2 : y2;
        const sx = down ? x1 : x1 + (x2 > x1 ? NW / 2 : -NW / 2);
        const ex = down ? x2 : x2 + (x2 > x1 ? -NW / 2 : NW / 2);
        const mx = (sx + ex) / 2, my = (sy + ey) / 2;
        // Straight for the next layer; bent (more for each parallel edge)
        // for edges within a layer, upwards, or skipping layers.
        const bend = (down ? 0 : 40) + 22 * k;
        const len = Math.hypot(ex - sx, ey - sy) || 1;
        const cx = mx + (-(ey - sy) / len) * bend, cy = my + ((ex - sx) / len) * bend;
        d = `M${sx},${sy} Q${cx},${cy} ${ex},${ey}`;
        lx = (sx + 2 * cx + ex) / 4 + 4; ly = (sy + 2 * cy + ey) / 4 - 2;
      }
      const p = sel("path", { d, class: "edge" + (cls ? " " + cls : ""), "data-src": u, "data-dst": v, "data-thread": th, "marker-end": "url(#a" + cls + ")" });
      const pc = t.s[u].split(".")[1][th];
      p.appendChild(sel("title", {}, "T" + th + ": " + t.p[th][parseInt(pc, 16)]));
      edges.appendChild(p);
      labels.appendChild(sel("text", { x: lx, y: ly, class: "elabel", fill: THREAD_COLOURS[th % 8] }, "T" + th));
    }
    t.s.forEach((s, u) => {
      const done = !s.split(".")[1].split("").some((c) => c !== "x");
      let cls = "node" + (u === 0 ? " init" : "") + (done ? " done" : "");
      if (hi && hi.nodes.has(u)) cls += " wn";
      if (hi && hi.trap === u) cls += " trap";
      const g = sel("g", { class: cls, "data-node": u, "data-state": describe(s), transform: `translate(${L.x(u) - NW / 2},${L.y(u) - NH / 2})` });
      g.appendChild(sel("rect", { width: NW, height: NH, rx: 5 }));
      const [mem, pcs] = describe(s).split(" ");
      g.appendChild(sel("text", { x: 6, y: 12 }, mem));
      g.appendChild(sel("text", { x: 6, y: 25 }, pcs));
      g.appendChild(sel("title", {}, "state " + u + ": " + describe(s)));
      nodes.appendChild(g);
    });
    svg.appendChild(edges);
    svg.appendChild(nodes);
    svg.appendChild(labels);
    box.appendChild(svg);
    // Wide spaces scroll: start with the initial state in view.
    box.scrollLeft = Math.max(0, L.x(0) - box.clientWidth / 2);
    $("graph-info").textContent = `(${t.s.length} states, ${count} transitions; bold: start, green: all finished)`;
    $("legend").innerHTML = w
      ? 'Witness of the selected model: <b class="pre">orange</b> from the start, <b class="cyc">red</b> the part repeated forever' +
        (w.k === "trap" ? ', <b class="trp">yellow</b> the state the fair threads cannot leave' : "") + "."
      : "Select a failing model to highlight its witness.";
  }

  // ---- verdicts and witness ---------------------------------------------
  function renderVerdicts(t) {
    const table = $("verdicts");
    table.textContent = "";
    const head = el("tr");
    for (const h of ["model", "CSV", "verdict", "Table 4"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    for (const name of ORDER) {
      const k = M.indexOf(name), v = t.v[k];
      const tr = el("tr", { "data-model": name, "data-verdict": v });
      if (name === state.model) tr.className = "sel";
      tr.appendChild(el("td", {}, pretty(name)));
      tr.appendChild(el("td", { class: "csv" }, name));
      tr.appendChild(el("td", { class: v }, v));
      const marks = [];
      if (t.d === name) marks.push("D");
      if (t.cf.includes(name)) marks.push("C");
      tr.appendChild(el("td", {}, marks.join(" ")));
      tr.addEventListener("click", () => { state.model = name; writeHash(); renderTest(); });
      table.appendChild(tr);
    }
  }

  function renderWitness(t, name, w) {
    const table = $("schedule"), intro = $("witness-intro");
    table.textContent = "";
    if (!name) {
      $("witness-title").textContent = "Witness";
      intro.textContent = "Click a model in the verdict table.";
      return;
    }
    const strong = name.endsWith("STRONG") || name === "STRONG_FAIR";
    $("witness-title").textContent = t.n + " under " + pretty(name) + ": " +
      (w ? "F, termination is NOT guaranteed" : "P, termination is guaranteed");
    if (!w) {
      intro.textContent = name === "UNFAIR"
        ? "The state space has no cycle, so every schedule finishes."
        : strong
          ? "From every reachable state, the threads of F (with Terminates) can force the test to finish, or to a step taken while F is empty; a strongly fair scheduler cannot avoid that forever."
          : "No reachable cycle keeps every guaranteed thread stepping: each cycle has F empty or leaves a thread of F without a step, so a weakly fair scheduler must leave it and every schedule it allows finishes.";
      return;
    }
    if (w.k === "trap") {
      intro.textContent = `A reachable state from which the threads of F cannot force termination (from there, steps of threads in F and Terminates reach only ${w.x} state${w.x === 1 ? "" : "s"}, none of which finishes or lets a thread step while F is empty), and a strongly fair schedule that stays there forever. F is the set of threads guaranteed fair execution before each step; the state is the one after it.`;
    } else if (name === "UNFAIR") {
      intro.textContent = "A schedule that never finishes (an unfair scheduler may pick it). The state is the one after each step.";
    } else {
      const f = w.e[w.c] ? showSet(w.e[w.c][3]) : "{}";
      intro.textContent = `A weakly fair schedule that never finishes: every thread of F=${f} takes a step in the repeated part, yet the test never finishes. F is the set of threads guaranteed fair execution before each step; the state is the one after it.`;
    }
    const head = el("tr");
    for (const h of ["#", "thread", "event", "F before", "state after"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    const sep = (text, cls) => {
      const tr = el("tr", { class: cls });
      tr.appendChild(el("td", { colspan: 5 }, text));
      table.appendChild(tr);
    };
    if (w.r === 0) sep("the trap state is the start state", "trap");
    w.e.forEach((ev, k) => {
      if (k === w.c) sep("repeats forever from here", "sep");
      const [th, pc, taken, f, node, term, fa] = ev;
      let what = "terminates";
      if (pc >= 0) {
        const code = t.p[th][pc];
        what = code + (code.includes("goto") ? (taken ? "  (taken)" : "  (not taken)") : "");
      }
      const tr = el("tr", { class: "ev", "data-k": k });
      tr.appendChild(el("td", {}, String(k + 1)));
      tr.appendChild(el("td", {}, "T" + th));
      tr.appendChild(el("td", {}, what));
      tr.appendChild(el("td", {}, showSet(f)));
      tr.appendChild(el("td", {}, describe(t.s[node]) + " term=" + showSet(term) + " F=" + showSet(fa)));
      table.appendChild(tr);
      if (w.r !== undefined && k + 1 === w.r) sep("trap state reached: " + describe(t.s[node]), "trap");
    });
    if (w.c === w.e.length) sep("(the repeated part is empty)", "sep");
  }

  // ---- emitted code ------------------------------------------------------
  // DATA.code[k] is base64 of the gzip of a JSON object, per
  // "target/mapping" (mapping "" for cuda and cpp; "error/" for a test
  // that cannot be emitted), of the texts of the tests of chunk k;
  // decompressed once, when first needed. `source(c, j, target, mapping)`
  // is the text of test j of chunk c, or null.
  const TARGETS = [["glsl", "GLSL (Vulkan)"], ["amber", "Amber"], ["metal", "Metal"], ["wgsl", "WGSL (WebGPU)"], ["cuda", "CUDA"], ["cpp", "C++"]];
  const MAPPINGS = [["plain", "plain"], ["round-robin", "round-robin"], ["chunked", "chunked"]];
  const chunks = new Map();
  function codeChunk(k) {
    if (!chunks.has(k)) {
      const bin = atob(DATA.code[k]);
      const bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      chunks.set(k, new Response(stream).text().then(JSON.parse));
    }
    return chunks.get(k);
  }
  function source(c, j, target, mapping) {
    const err = c["error/"];
    if (err && err[j]) return err[j];
    const col = c[target + "/" + mapping];
    return (col && col[j]) || null;
  }
  function renderCode(t, i) {
    if (!DATA.code.length) {
      $("emitted-box").style.display = "none";
      return;
    }
    $("emitted-box").style.display = "";
    setOptions($("c-target"), TARGETS);
    const target = TARGETS.some(([v]) => v === state.target) ? state.target : "glsl";
    const mapping = MAPPINGS.some(([v]) => v === state.mapping) ? state.mapping : "plain";
    $("c-target").value = target;
    $("c-mapping").value = mapping;
    const perTest = target !== "cuda" && target !== "cpp";
    $("c-mapping").disabled = !perTest;
    $("emitted-note").textContent = perTest
      ? "The file `backends emit --target " + target + " --mapping " + mapping + "` writes for this test (M = floor(65535 / N) instances)."
      : "This test's function in the one program `backends emit --target " + target + "` writes for a whole suite; the program's --mapping flag picks the mapping at run time.";
    $("emitted").textContent = "decompressing...";
    document.body.removeAttribute("data-code");
    codeChunk(Math.floor(i / DATA.chunk)).then((c) => {
      if (state.test !== t.n) return; // another test was chosen meanwhile
      const src = source(c, i % DATA.chunk, target, perTest ? mapping : "");
      $("emitted").textContent = src || "no code for this target";
      document.body.setAttribute("data-code", t.n + "/" + target + "/" + (perTest ? mapping : ""));
    });
  }
  setOptions($("c-target"), TARGETS);
  setOptions($("c-mapping"), MAPPINGS);
  for (const [id, key] of [["c-target", "target"], ["c-mapping", "mapping"]]) {
    $(id).addEventListener("change", () => {
      state[key] = $(id).value;
      writeHash();
      renderTest();
    });
  }

  // ---- run this test on my GPU ---------------------------------------------
  // The test's WGSL shaders (from its code chunk) run with AxbGpu, the runner
  // the page of `backends emit --target webgpu` uses: the budget calibrated
  // into a time per run and the canary first, then each mapping `runs` times.
  const gpuRun = { gpu: null, calibration: null, busy: false };
  function gpuStatus(text, cls) {
    $("g-status").textContent = text;
    $("g-status").className = cls || "";
  }
  function gpuNumber(id, lo, hi, dflt) {
    const v = Math.round(Number($(id).value));
    return Number.isFinite(v) && v >= lo && v <= hi ? v : dflt;
  }
  // What one test's runs say about the models (issue 23 item 1): the test
  // terminates under its conformance models (verdict P), so a hang under
  // any mapping means the GPU is not consistent with them.
  function gpuAnswer(t, rows, runs) {
    const conf = M.filter((m, i) => t.v[i] === "P");
    const hung = Object.entries(rows)
      .filter(([, r]) => r.exhausted > 0)
      .map(([m, r]) => `${m} (${r.exhausted} of ${runs} runs hung)`);
    let sentence;
    if (!hung.length) {
      sentence = `It terminated in every run: nothing here contradicts any model (one test is a small sample).`;
    } else if (!conf.length) {
      sentence = `It hung under ${hung.join(", ")}, but it may hang under every model, so this violates none.`;
    } else {
      sentence =
        `It hung under ${hung.join(", ")}. It is a conformance test of ${conf.join(", ")} (it terminates under ${conf.length > 1 ? "them" : "it"}), ` +
        `so this GPU is not consistent with ${conf.length > 1 ? "these models" : "this model"}.`;
    }
    return { violated: hung.length ? conf : [], sentence };
  }

  async function runOnGpu(log) {
    if (gpuRun.busy || !DATA.code.length) return;
    gpuRun.busy = true;
    $("g-run").disabled = true;
    document.body.removeAttribute("data-gpu");
    let i = byName.get(state.test);
    if (i === undefined) i = 0;
    const t = DATA.tests[i];
    const runs = gpuNumber("g-runs", 1, 1000, 5);
    const ms = gpuNumber("g-ms", 1, 10000, 100);
    const table = $("g-results");
    table.textContent = "";
    const head = table.insertRow();
    for (const h of ["mapping", "runs", "terminated", "budget exhausted", "mean ms"]) head.appendChild(el("th", {}, h));
    try {
      const g = gpuRun;
      if (!g.gpu || g.gpu.lost) {
        gpuStatus("requesting a WebGPU device ...");
        g.gpu = await AxbGpu.open();
        g.calibration = null;
      }
      const info = g.gpu.info;
      const device = [info.vendor, info.architecture, info.device, info.description].filter((x) => x).join(" ");
      if (!g.calibration || g.calibration.target_ms !== ms) {
        gpuStatus("calibrating the budget on " + device + " ...");
        const c = await g.gpu.calibrate(ms);
        const k = await g.gpu.canary(c.budget);
        if (!k.ok) throw new Error("refused: " + AxbGpu.canaryRefusal(k));
        g.calibration = c;
      }
      const budget = g.calibration.budget;
      const chunk = await codeChunk(Math.floor(i / DATA.chunk));
      for (const [m] of MAPPINGS) {
        const src = source(chunk, i % DATA.chunk, "wgsl", m);
        if (!src || !src.startsWith("// axb-run:")) throw new Error(src || "no WGSL shader for " + m + " in this page");
        const row = table.insertRow();
        row.dataset.mapping = m;
        const cells = [m, 0, 0, 0, ""].map((v) => row.insertCell());
        cells[0].textContent = m;
        gpuStatus("compiling " + t.n + " (" + m + ") ...");
        const p = await g.gpu.prepare(src);
        let done = 0, term = 0, total = 0;
        for (let k = 0; k < runs; k++) {
          gpuStatus("running " + t.n + " under " + m + ": run " + (k + 1) + " of " + runs);
          const r = await g.gpu.run(p, budget);
          done++;
          term += r.terminated;
          total += r.elapsed_ms;
          cells[1].textContent = done;
          cells[2].textContent = term;
          cells[3].textContent = done - term;
          cells[4].textContent = (total / done).toFixed(1);
          row.dataset.terminated = term;
          row.dataset.exhausted = done - term;
        }
        if (state.test !== t.n) throw new Error("another test was chosen: stopped");
      }
      const rows = {};
      for (const r of table.querySelectorAll("tr[data-mapping]")) {
        rows[r.dataset.mapping] = { terminated: +r.dataset.terminated, exhausted: +r.dataset.exhausted };
      }
      const answer = gpuAnswer(t, rows, runs);
      gpuStatus(
        `${t.n} on ${device}: ${runs} runs per mapping, each with a budget of ${budget} loop iterations per thread ` +
          `(about ${ms} ms; the canary passed). A run whose budget was exhausted counts as non-terminating. ` +
          answer.sentence,
        answer.violated.length ? "bad" : "ok"
      );
      document.body.setAttribute("data-gpu", t.n);
      if (log) console.log("axb-gpu: " + JSON.stringify({ test: t.n, device: info, budget, runs, mappings: rows, answer }));
    } catch (e) {
      gpuStatus(e && e.message ? e.message : String(e), "bad");
      document.body.setAttribute("data-gpu", "error");
      if (log) console.log("axb-gpu: " + JSON.stringify({ error: e && e.message ? e.message : String(e) }));
    } finally {
      gpuRun.busy = false;
      $("g-run").disabled = false;
    }
  }
  $("g-run").addEventListener("click", () => runOnGpu(false));

  // ---- kernel programs -------------------------------------------------
  // What the oracle computed (src/explorer/kernel.rs): per model a row with
  // the verdict, the literature's, whether they agree, and the explanation.
  const KTARGETS = [["cuda", "CUDA"], ["glsl", "GLSL (Vulkan)"], ["wgsl", "WGSL (WebGPU)"]];
  const OUTCOME = { P: "P, termination is guaranteed", F: "F, termination is NOT guaranteed", deadlock: "F, termination is NOT guaranteed (a schedule deadlocks)", "?": "no verdict" };
  function renderKernel(t) {
    $("code-title").textContent = "Program (.litmus, as the kernel printer writes it)";
    const facts = $("facts");
    facts.textContent = "";
    facts.appendChild(el("span", {}, "kernel program: " + t.shape));
    facts.appendChild(el("span", {}, "memory sequentially consistent"));
    facts.appendChild(el("span", {}, "file " + t.file));
    const stated = t.r.filter((r) => r.a).length, agree = t.r.filter((r) => r.a === "yes").length;
    facts.appendChild(el("span", { id: "agreement", "data-stated": stated, "data-agree": agree },
      stated ? "the oracle agrees with " + agree + " of the " + stated + " verdicts the literature states" : "the file states no verdict"));
    $("code").textContent = t.src;
    $("k-lit").textContent = t.lit || "(the file has no leading comment)";

    const table = $("verdicts");
    table.textContent = "";
    const head = el("tr");
    for (const h of ["model", "text form", "verdict", "literature", "agrees", "states (reduced)"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    for (const r of t.r) {
      const tr = el("tr", { "data-model": r.m, "data-verdict": r.v, "data-expected": r.x, "data-agree": r.a });
      tr.className = (r.m === state.model ? "sel" : "") + (r.own ? " own" : "");
      tr.appendChild(el("td", {}, r.p));
      tr.appendChild(el("td", { class: "csv" }, r.m));
      tr.appendChild(el("td", { class: r.v === "?" ? "" : r.v }, r.v));
      tr.appendChild(el("td", {}, r.x));
      tr.appendChild(el("td", { class: r.a ? "agree-" + r.a : "" }, r.a === "yes" ? "✓" : r.a === "no" ? "✗ disagrees" : r.a === "undecided" ? "? no verdict" : ""));
      tr.appendChild(el("td", {}, r.s ? String(r.s) : ""));
      tr.addEventListener("click", () => { state.model = r.m; writeHash(); renderTest(); });
      table.appendChild(tr);
    }

    const row = t.r.find((r) => r.m === state.model);
    if (!row) {
      $("witness-title").textContent = "Witness";
      $("witness-intro").textContent = "Click a model in the verdict table.";
      $("k-witness").textContent = "";
    } else {
      $("witness-title").textContent = t.n + " under " + row.p + ": " + OUTCOME[row.v];
      $("witness-intro").textContent = row.v === "P"
        ? "Why, as oracle explain gives it:"
        : "The witness schedule oracle explain gives (found on the product without reductions, so every step is one of the program):";
      $("k-witness").textContent = row.w;
    }

    document.body.removeAttribute("data-code");
    if (!t.code.length) {
      $("emitted-box").style.display = "none";
      return;
    }
    $("emitted-box").style.display = "";
    setOptions($("c-target"), KTARGETS);
    const target = KTARGETS.some(([v]) => v === state.target) ? state.target : "glsl";
    $("c-target").value = target;
    $("c-mapping").disabled = true;
    const [text, refusal] = t.code.find(([n]) => n === target)[1];
    $("emitted-note").textContent = refusal
      ? "backends emit --target " + target + " refuses this program:"
      : "The file backends emit --target " + target + " writes for this program (one launch of its workgroups).";
    $("emitted").textContent = refusal || text;
    document.body.setAttribute("data-code", t.key + "/" + target + "/" + (refusal ? "refused" : ""));
  }

  function renderTest() {
    let i = indexOf(state.test);
    // A link to a name the page does not hold says so, and shows the first.
    const missing = i === undefined && state.test ? state.test : null;
    if (i === undefined) i = 0;
    const t = ITEMS[i];
    $("notice").hidden = !missing;
    if (missing) {
      $("notice").textContent = `This page has no test or kernel program named “${missing}”` +
        (t ? `; showing ${t.n} instead.` : ".");
      document.body.setAttribute("data-missing", missing);
    } else {
      document.body.removeAttribute("data-missing");
    }
    if (!t) { $("title").textContent = "empty suite"; return; }
    state.test = t.key;
    for (const li of $("list").children) {
      li.className = li.dataset.name === t.key ? "sel" : "";
      if (li.className) li.scrollIntoView({ block: "nearest" });
    }
    $("title").textContent = t.n;
    document.body.setAttribute("data-kind", t.kernel ? "kernel" : "axb");
    if (t.kernel) {
      renderKernel(t);
      return;
    }
    $("code-title").textContent = "Pseudo-code";
    const facts = $("facts");
    facts.textContent = "";
    facts.appendChild(el("span", {}, "configuration " + t.c));
    facts.appendChild(el("span", { id: "bucket" }, t.d ? "distinguishing for " + pretty(t.d) : "in no Table 4 bucket"));
    if (t.u) facts.appendChild(el("span", {}, "duplicate of " + t.u + " up to location renaming"));
    const idi = el("span", { id: "idioms" }, t.i.length ? "idioms: " : "no idiom");
    for (const tag of t.i) idi.appendChild(el("span", { class: "tag" }, tag));
    facts.appendChild(idi);
    $("code").textContent = t.p.map((th, k) => "T" + k + ":\n" + th.map((l) => "  " + l + "\n").join("")).join("");
    let name = state.model && M.includes(state.model) ? state.model : "";
    const w = name && t.m[M.indexOf(name)] >= 0 ? t.w[t.m[M.indexOf(name)]] : null;
    renderVerdicts(t);
    drawGraph(t, w);
    renderWitness(t, name, w);
    renderCode(t, i);
    if (!DATA.code.length) $("gpu-box").style.display = "none";
    if ($("g-results").dataset.test !== t.n) {
      $("g-results").textContent = "";
      $("g-results").dataset.test = t.n;
      if (!gpuRun.busy) gpuStatus("");
    }
  }

  $("list").addEventListener("click", (e) => {
    const li = e.target.closest("li");
    if (!li) return;
    state.test = li.dataset.name;
    writeHash();
    renderTest();
  });
  window.addEventListener("hashchange", () => {
    state = readHash();
    for (const [id, key] of [["f-config", "config"], ["f-vmodel", "vm"], ["f-verdict", "vv"], ["f-bucket", "bucket"], ["f-idiom", "idiom"], ["f-launch", "launch"], ["f-lit", "lit"], ["f-name", "q"]]) $(id).value = state[key] || "";
    renderList();
    renderTest();
  });
  initFilters();
  renderList();
  renderTest();
  document.body.setAttribute("data-ready", "1");
  // `#...&gpu=run&runs=K&ms=D` runs the test on the GPU when the page
  // opens, and logs the outcome on the console (`axb-gpu: {...}`).
  const h = readHash();
  if (h.gpu === "run") {
    if (h.runs) $("g-runs").value = h.runs;
    if (h.ms) $("g-ms").value = h.ms;
    runOnGpu(true);
  }
})();

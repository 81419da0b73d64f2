// The page of `backends emit --target webgpu`: runs the embedded suite with
// the runner (AxbGpu, the script above) and keeps every result in this
// browser's storage (IndexedDB) the moment it is known.
//
// URL fragment options (for automation, e.g. a headless browser in CI):
//   #autorun          start when loaded
//   &fresh            clear stored results first
//   &iterations=K     runs of each test and mapping
//   &run-ms=D         time per run
//   &log              console.log progress and, at the end, the result file
//                     (lines `axb-file: LINE`, then `axb-end: STATUS`)
//   &no-canary        run even on a device that fails the canary (testing
//                     the page only: its results are then meaningless)
//   &lose-after=N     destroy the device after N runs (testing how a lost
//                     device is reported)
//   &stop-after=N     press Stop after N runs of this visit (testing resume)
//   &send             at the end, send the results to the server the page
//                     came from (`backends serve`), as "Send my results" does;
//                     with &log, its answer is logged (`axb-sent: ...`)
"use strict";

(() => {
  const DATA = JSON.parse(document.getElementById("data").textContent);
  const $ = (id) => document.getElementById(id);
  const opts = Object.fromEntries(
    location.hash
      .replace(/^#/, "")
      .split("&")
      .filter((s) => s)
      .map((kv) => {
        const i = kv.indexOf("=");
        return i < 0 ? [decodeURIComponent(kv), "1"] : [decodeURIComponent(kv.slice(0, i)), decodeURIComponent(kv.slice(i + 1))];
      })
  );
  const log = (msg) => {
    if (opts.log) console.log("axb-webgpu: " + msg);
  };

  // ---- the result file ---------------------------------------------------
  // Line 1: this header; then, in the order they happened, `session` lines
  // (a start: device, calibration, canary), `event` lines (errors) and one
  // JSON line per run, as the CUDA program prints them.
  function headerLine(device) {
    return JSON.stringify({
      axb: "webgpu-results",
      format: 1,
      target: "webgpu",
      suite: DATA.suite,
      shape: DATA.shape,
      mappings: DATA.mappings,
      device: device || null,
      settings: state.settings,
    });
  }

  // ---- storage -------------------------------------------------------------
  // IndexedDB, one record per line; without it (some private modes), lines
  // are kept in memory only, and the page says so.
  class Store {
    static async open(suite) {
      const s = new Store(suite);
      try {
        s.db = await new Promise((resolve, reject) => {
          const req = indexedDB.open("axb-webgpu", 1);
          req.onupgradeneeded = () => {
            const db = req.result;
            db.createObjectStore("lines", { autoIncrement: true }).createIndex("suite", "suite");
            db.createObjectStore("meta");
          };
          req.onsuccess = () => resolve(req.result);
          req.onerror = () => reject(req.error);
          req.onblocked = () => reject(new Error("the database is blocked by another tab"));
        });
      } catch (e) {
        s.db = null;
        s.why = e && e.message ? e.message : String(e);
      }
      return s;
    }
    constructor(suite) {
      this.suite = suite;
      this.mem = [];
      this.meta = null;
    }
    tx(stores, mode, body) {
      return new Promise((resolve, reject) => {
        const t = this.db.transaction(stores, mode);
        let value;
        t.oncomplete = () => resolve(value);
        t.onerror = () => reject(t.error);
        t.onabort = () => reject(t.error || new Error("storage transaction aborted"));
        body(t, (v) => (value = v));
      });
    }
    async lines() {
      if (!this.db) return this.mem.slice();
      return this.tx(["lines"], "readonly", (t, done) => {
        const req = t.objectStore("lines").index("suite").getAll(this.suite);
        req.onsuccess = () => done(req.result.map((r) => r.line));
      });
    }
    async add(line) {
      if (!this.db) return void this.mem.push(line);
      return this.tx(["lines"], "readwrite", (t) => t.objectStore("lines").add({ suite: this.suite, line }));
    }
    async getMeta() {
      if (!this.db) return this.meta;
      return this.tx(["meta"], "readonly", (t, done) => {
        const req = t.objectStore("meta").get(this.suite);
        req.onsuccess = () => done(req.result || null);
      });
    }
    async setMeta(m) {
      if (!this.db) return void (this.meta = m);
      return this.tx(["meta"], "readwrite", (t) => t.objectStore("meta").put(m, this.suite));
    }
    async clear() {
      this.mem = [];
      this.meta = null;
      if (!this.db) return;
      return this.tx(["lines", "meta"], "readwrite", (t) => {
        t.objectStore("meta").delete(this.suite);
        const req = t.objectStore("lines").index("suite").openKeyCursor(IDBKeyRange.only(this.suite));
        req.onsuccess = () => {
          const c = req.result;
          if (c) {
            t.objectStore("lines").delete(c.primaryKey);
            c.continue();
          }
        };
      });
    }
  }

  // ---- state -------------------------------------------------------------
  const state = {
    store: null,
    shaders: null, // [test][mapping index] -> WGSL
    gpu: null,
    calibration: null,
    canary: null,
    settings: null, // {run_ms, iterations, mappings}
    meta: null,
    lines: [], // every stored line, in order
    done: new Map(), // "test\tmapping" -> runs
    hung: new Map(), // "test\tmapping" -> non-terminating runs
    runs: 0,
    nonTerminating: 0,
    running: false,
    stop: false,
    startedAt: 0,
    ranNow: 0,
    current: "",
  };
  const key = (t, m) => t + "\t" + m;

  function message(text, cls) {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    $("messages").appendChild(p);
    log((cls === "bad" ? "error: " : "") + text);
  }

  function setStatus(id, text, cls) {
    $(id).textContent = text;
    $(id).className = "status " + (cls || "");
  }

  // Counts a stored line (a run) into the live totals.
  function count(line) {
    let v;
    try {
      v = JSON.parse(line);
    } catch (e) {
      return;
    }
    if (v.test === undefined) return;
    const k = key(v.test, v.mapping);
    state.done.set(k, (state.done.get(k) || 0) + 1);
    state.runs++;
    if (!v.terminated) {
      state.hung.set(k, (state.hung.get(k) || 0) + 1);
      state.nonTerminating++;
    }
  }

  async function record(obj) {
    const line = JSON.stringify(obj);
    await state.store.add(line);
    state.lines.push(line);
    count(line);
    return line;
  }

  // An error, shown and kept in the result file (and, unless `keep` is
  // false, in storage).
  async function recordEvent(kind, msg, extra, keep = true) {
    const e = Object.assign({ event: kind, message: msg, at_unix_ms: Date.now() }, extra || {});
    try {
      if (!keep) throw new Error("not kept");
      await record(e);
    } catch (err) {
      state.lines.push(JSON.stringify(e));
    }
    message(msg, "bad");
  }

  // ---- display -------------------------------------------------------------
  function total() {
    const s = state.settings || readSettings();
    return DATA.tests.length * s.mappings.length * s.iterations;
  }

  let drawPending = false;
  function draw() {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(() => {
      drawPending = false;
      drawNow();
    });
  }

  function drawNow() {
    const s = state.settings || readSettings();
    let done = 0;
    for (const t of DATA.tests) for (const m of s.mappings) done += Math.min(state.done.get(key(t[0], m)) || 0, s.iterations);
    const all = total();
    $("bar").max = Math.max(all, 1);
    $("bar").value = done;
    let eta = "";
    if (state.running && state.ranNow > 0) {
      const per = (performance.now() - state.startedAt) / state.ranNow;
      eta = `, about ${fmtTime((all - done) * per)} left`;
    }
    $("counts").textContent = `${done} of ${all} runs (${((100 * done) / Math.max(all, 1)).toFixed(1)}%), ${state.nonTerminating} non-terminating${eta}`;
    $("current").textContent = state.current;
    const rows = [["mapping", "runs", "non-terminating runs", "tests with a non-terminating run"]];
    for (const m of DATA.mappings) {
      let runs = 0, hung = 0, tests = 0;
      for (const t of DATA.tests) {
        runs += state.done.get(key(t[0], m)) || 0;
        const h = state.hung.get(key(t[0], m)) || 0;
        hung += h;
        tests += h > 0;
      }
      rows.push([m, runs, hung, tests]);
    }
    const table = $("per-mapping");
    table.textContent = "";
    rows.forEach((r, i) => {
      const tr = table.insertRow();
      for (const c of r) {
        const cell = document.createElement(i ? "td" : "th");
        cell.textContent = c;
        tr.appendChild(cell);
      }
    });
    drawAnswer(s);
    const ul = $("nonterm");
    ul.textContent = "";
    let shown = 0;
    for (const t of DATA.tests) {
      const parts = [];
      for (const m of DATA.mappings) {
        const h = state.hung.get(key(t[0], m)) || 0;
        if (h) parts.push(`${m} ${h}/${state.done.get(key(t[0], m))}`);
      }
      if (parts.length && shown++ < 500) {
        const li = document.createElement("li");
        li.textContent = `${t[0]}: ${parts.join(", ")}`;
        ul.appendChild(li);
      }
    }
    if (shown > 500) {
      const li = document.createElement("li");
      li.textContent = `... and ${shown - 500} more (in the result file)`;
      ul.appendChild(li);
    }
  }

  // Per model: the conformance tests run, and those that hung, with their
  // mapping and k of n runs. A model is violated when one of its
  // conformance tests (which terminate under it) hung at least once.
  function answer(s) {
    return DATA.models.map(([name, words], mi) => {
      let run = 0;
      const hung = [];
      DATA.tests.forEach((t, ti) => {
        const passes = DATA.conformance[ti];
        if (!passes || !passes.includes(mi)) return;
        let ran = false;
        for (const m of s.mappings) {
          const n = state.done.get(key(t[0], m)) || 0;
          const h = state.hung.get(key(t[0], m)) || 0;
          ran = ran || n > 0;
          if (h) hung.push(`${t[0]} (${m}, ${h} of ${n} runs hung)`);
        }
        run += ran;
      });
      const verdict = run === 0 ? "nothing to judge" : hung.length ? "violated" : "consistent";
      return { name, words, run, hung, verdict };
    });
  }

  function drawAnswer(s) {
    const rows = answer(s);
    const t = $("answer");
    t.textContent = "";
    const head = t.insertRow();
    for (const h of ["model", "in words", "verdict", "conformance tests run", "which hung (mapping, k of n runs)"]) {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    }
    for (const r of rows) {
      const tr = t.insertRow();
      const cells = [r.name, r.words, r.verdict, String(r.run), r.hung.slice(0, 20).join("; ") + (r.hung.length > 20 ? `; ... ${r.hung.length - 20} more` : "")];
      cells.forEach((c, i) => {
        const td = tr.insertCell();
        td.textContent = c;
        if (i === 2) td.className = r.verdict === "violated" ? "bad" : r.verdict === "consistent" ? "ok" : "";
      });
    }
    const bad = rows.filter((r) => r.verdict === "violated").map((r) => r.name);
    const good = rows.filter((r) => r.verdict === "consistent").map((r) => r.name);
    $("answer-sentence").textContent =
      state.runs === 0
        ? "No runs yet: press Start, and when the runs end this says which progress models your GPU's behaviour is consistent with."
        : (bad.length
            ? `Your GPU hung on a conformance test of ${bad.join(", ")}: it does not give ${bad.length > 1 ? "these models'" : "this model's"} guarantee, so code relying on it may hang. `
            : "") +
          (good.length
            ? `No conformance test of ${good.join(", ")} hung: your GPU's behaviour is consistent with ${good.length > 1 ? "them" : "it"} (more runs could still find a hang).`
            : "");
  }

  function fmtTime(ms) {
    const s = Math.round(ms / 1000);
    return s < 90 ? `${s} s` : s < 5400 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
  }

  function showDevice(info) {
    const t = $("device");
    t.textContent = "";
    const rows = [
      ["vendor", info.vendor],
      ["architecture", info.architecture],
      ["device", info.device],
      ["description", info.description],
      ["fallback adapter", info.fallback_adapter ? "yes (a software implementation)" : "no"],
      ["browser", info.user_agent],
    ];
    for (const [k, v] of rows) {
      const tr = t.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = v || "(not given)";
    }
  }

  // ---- settings ------------------------------------------------------------
  function readSettings() {
    const num = (id, lo, hi, dflt) => {
      const v = Math.round(Number($(id).value));
      return Number.isFinite(v) && v >= lo && v <= hi ? v : dflt;
    };
    const mappings = DATA.mappings.filter((m) => $("map-" + m).checked);
    return {
      run_ms: num("run-ms", 1, 10000, 100),
      iterations: num("iterations", 1, 1000, 20),
      mappings: mappings.length ? mappings : DATA.mappings.slice(),
    };
  }

  function lockSettings(s) {
    $("run-ms").value = s.run_ms;
    $("iterations").value = s.iterations;
    for (const m of DATA.mappings) $("map-" + m).checked = s.mappings.includes(m);
    for (const el of document.querySelectorAll("#settings input")) el.disabled = true;
  }

  function unlockSettings() {
    for (const el of document.querySelectorAll("#settings input")) el.disabled = false;
  }

  function sameDevice(a, b) {
    return ["vendor", "architecture", "device", "description"].every((k) => (a[k] || "") === (b[k] || ""));
  }

  // ---- running -------------------------------------------------------------
  async function start() {
    if (state.running) return;
    state.running = true;
    state.stop = false;
    $("start").disabled = true;
    $("stop").disabled = false;
    $("clear").disabled = true;
    let status = "complete";
    try {
      status = await runAll();
    } catch (e) {
      status = "error";
      const kind = e instanceof AxbGpu.AxbGpuError ? e.kind : "error";
      await recordEvent(kind, e.message || String(e), state.current ? { during: state.current } : {});
      if (kind === "lost" || kind === "device") state.gpu = null;
    } finally {
      state.running = false;
      state.current = "";
      $("start").disabled = false;
      $("stop").disabled = true;
      $("clear").disabled = false;
      drawNow();
    }
    return status;
  }

  async function runAll() {
    if (!state.gpu) {
      state.current = "requesting a WebGPU device";
      draw();
      state.gpu = await AxbGpu.open();
      state.calibration = null;
      state.gpu.onLost = (l) => message(`the GPU device was lost (${l.reason}): ${l.message}`, "bad");
    }
    const gpu = state.gpu;
    showDevice(gpu.info);
    if (state.meta && state.meta.device && !sameDevice(state.meta.device, gpu.info)) {
      throw new AxbGpu.AxbGpuError(
        "unsupported",
        `the stored results are of another adapter (${state.meta.device.vendor} ${state.meta.device.architecture} ${state.meta.device.description}): download them and clear them before running on this one`
      );
    }
    if (!state.settings) state.settings = readSettings();
    lockSettings(state.settings);
    if (!state.meta) {
      state.meta = { settings: state.settings, device: gpu.info, created_unix_ms: Date.now() };
      await state.store.setMeta(state.meta);
    }
    if (!state.calibration) {
      state.current = "calibrating the budget";
      draw();
      setStatus("calibration", "Calibrating: how many loop iterations make a run of " + state.settings.run_ms + " ms ...");
      const c = await gpu.calibrate(state.settings.run_ms, (b, ms) => log(`calibration: budget ${b}: ${ms.toFixed(1)} ms`));
      state.calibration = c;
      setStatus(
        "calibration",
        `Calibrated: a budget of ${c.budget} loop iterations per thread makes a spinning run take about ${c.run_ms.toFixed(0)} ms ` +
          `(asked: ${c.target_ms} ms; ${c.iterations_per_ms} iterations per ms with every workgroup spinning, ${c.overhead_ms.toFixed(1)} ms per dispatch besides).`,
        "ok"
      );
      state.current = "the canary";
      draw();
      const k = await gpu.canary(c.budget);
      state.canary = k;
      const canary = { ok: k.ok, budget: k.budget, exhausted: k.exhausted, finished: k.finished, early: k.early, elapsed_ms: Math.round(k.elapsed_ms * 1000) / 1000 };
      await record({ event: "session", at_unix_ms: Date.now(), device: gpu.info, calibration: c, canary, no_canary: !!opts["no-canary"] });
      if (!k.ok) {
        const why = AxbGpu.canaryRefusal(k);
        setStatus("canary", "Refused: " + why + ".", "bad");
        if (!opts["no-canary"]) {
          state.calibration = null; // a later Start runs the canary again
          await recordEvent("canary-refused", why);
          return "refused";
        }
        message("no-canary: running anyway, to test the page only; these results cannot show non-termination", "note");
      } else {
        setStatus(
          "canary",
          `Canary passed: one thread waiting for a write nobody makes spent its budget (${k.budget} iterations, ${k.elapsed_ms.toFixed(1)} ms) instead of ending, so this device does not end loops by itself and its runs can show non-termination.`,
          "ok"
        );
      }
    }
    state.startedAt = performance.now();
    state.ranNow = 0;
    const budget = state.calibration.budget;
    const s = state.settings;
    for (let ti = 0; ti < DATA.tests.length; ti++) {
      const [name] = DATA.tests[ti];
      for (const m of s.mappings) {
        const mi = DATA.mappings.indexOf(m);
        let n = state.done.get(key(name, m)) || 0;
        if (n >= s.iterations) continue;
        if (state.stop) return "stopped";
        state.current = `${name} under ${m}: compiling`;
        draw();
        let prepared;
        try {
          prepared = await gpu.prepare(state.shaders[ti][mi]);
        } catch (e) {
          if (!(e instanceof AxbGpu.AxbGpuError) || ["lost", "device"].includes(e.kind)) throw e;
          await recordEvent(e.kind, e.message, { test: name, mapping: m });
          continue;
        }
        const h = prepared.header;
        for (; n < s.iterations; n++) {
          if (state.stop) return "stopped";
          state.current = `${name} under ${m}: run ${n + 1} of ${s.iterations}`;
          let r;
          try {
            r = await gpu.run(prepared, budget);
          } catch (e) {
            if (!(e instanceof AxbGpu.AxbGpuError) || ["lost", "device"].includes(e.kind)) throw e;
            await recordEvent(e.kind, e.message, { test: name, mapping: m, iteration: n });
            break;
          }
          const line = await record({
            test: name,
            target: "webgpu",
            mapping: m,
            instances: h.instances,
            workgroups: h.workgroups,
            iteration: n,
            terminated: r.terminated,
            elapsed_ms: Math.round(r.elapsed_ms * 1000) / 1000,
            budget,
            exhausted: r.exhausted,
            stopped: r.stopped,
            finished: r.finished,
            early: r.early,
          });
          state.ranNow++;
          if (opts.log) log("run " + line);
          if (opts["lose-after"] && state.ranNow >= Number(opts["lose-after"])) gpu.device.destroy();
          if (opts["stop-after"] && state.ranNow >= Number(opts["stop-after"])) state.stop = true;
          if (r.early && !opts["no-canary"]) {
            throw new AxbGpu.AxbGpuError(
              "device",
              `${name} (${m}): ${r.early} threads left their loop before END with budget to spare: the device ends loops by itself, so its runs cannot show non-termination`
            );
          }
          draw();
        }
      }
    }
    return "complete";
  }

  // ---- the download ----------------------------------------------------------
  function resultText() {
    const device = (state.gpu && state.gpu.info) || (state.meta && state.meta.device) || null;
    return [headerLine(device)].concat(state.lines).join("\n") + "\n";
  }

  function download() {
    const blob = new Blob([resultText()], { type: "application/x-ndjson" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${DATA.suite.name}.webgpu.jsonl`;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => {
      URL.revokeObjectURL(a.href);
      a.remove();
    }, 1000);
  }

  // ---- sending to `backends serve` -------------------------------------------
  // Served over HTTP by `backends serve`, the page can send its result file
  // (the same text as the download) to the server's `upload`, which checks
  // it as `backends import` does and stores it in the results database.
  function served() {
    return location.protocol === "http:" || location.protocol === "https:";
  }

  async function send() {
    if (!served()) return "not served";
    $("send").disabled = true;
    try {
      const r = await fetch("upload", {
        method: "POST",
        headers: { "Content-Type": "application/x-ndjson" },
        body: resultText(),
      });
      const answer = await r.text();
      let words = answer;
      try {
        const j = JSON.parse(answer);
        words = r.ok ? `sent: ${j.message}` : `not stored: ${j.error}`;
      } catch (_) {
        words = `not stored (${r.status}): ${answer.slice(0, 300)}`;
      }
      message(words, r.ok ? "note" : "bad");
      return words;
    } catch (e) {
      const words = "not sent: " + (e && e.message ? e.message : e);
      message(words, "bad");
      return words;
    } finally {
      $("send").disabled = false;
    }
  }

  function logFile(status) {
    if (!opts.log) return;
    drawNow();
    for (const r of answer(state.settings || readSettings())) console.log(`axb-answer: ${r.name} ${r.verdict} ${r.run} ${r.hung.length}`);
    console.log("axb-answer-text: " + $("answer-sentence").textContent + " | " + $("import-command").textContent);
    for (const line of resultText().split("\n")) if (line) console.log("axb-file: " + line);
    console.log("axb-end: " + status);
  }

  // ---- start-up --------------------------------------------------------------
  async function loadShaders() {
    const bytes = Uint8Array.from(atob(DATA.shaders), (c) => c.charCodeAt(0));
    if (typeof DecompressionStream === "undefined") {
      throw new AxbGpu.AxbGpuError("unsupported", "this browser has no DecompressionStream, which the page needs to unpack its shaders");
    }
    const text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
    return JSON.parse(text);
  }

  async function init() {
    const t0 = performance.now();
    $("suite").textContent = `${DATA.suite.name}: ${DATA.tests.length} tests, ${DATA.mappings.join(", ")} (suite fingerprint ${DATA.suite.fnv64}, code shape ${DATA.shape}: see Words below)`;
    $("import-command").textContent = DATA.import;
    document.title = `${DATA.suite.name}: progress litmus tests on your GPU`;
    const boxes = $("mapping-boxes");
    for (const m of DATA.mappings) {
      const l = document.createElement("label");
      const c = document.createElement("input");
      c.type = "checkbox";
      c.id = "map-" + m;
      c.checked = true;
      l.appendChild(c);
      l.appendChild(document.createTextNode(" " + m));
      boxes.appendChild(l);
    }
    if (opts.iterations) $("iterations").value = opts.iterations;
    if (opts["run-ms"]) $("run-ms").value = opts["run-ms"];
    $("start").onclick = () => start();
    $("stop").onclick = () => {
      state.stop = true;
      state.current = "stopping after this run";
      draw();
    };
    $("download").onclick = download;
    $("send").onclick = send;
    $("send").hidden = !served();
    $("clear").onclick = async () => {
      if (state.running) return;
      if (state.runs && !opts.fresh && !confirm(`Discard the ${state.runs} stored runs of this suite?`)) return;
      await state.store.clear();
      Object.assign(state, { lines: [], done: new Map(), hung: new Map(), runs: 0, nonTerminating: 0, meta: null, settings: null, calibration: null });
      unlockSettings();
      setStatus("stored", "");
      drawNow();
    };

    state.store = await Store.open(DATA.suite.fnv64);
    if (!state.store.db) {
      message(`This browser's storage is not available (${state.store.why}): results are kept only while this page is open; download them before closing it.`, "note");
    }
    if (opts.fresh) await state.store.clear();
    state.meta = await state.store.getMeta();
    for (const line of await state.store.lines()) {
      state.lines.push(line);
      count(line);
    }
    if (state.meta) {
      state.settings = state.meta.settings;
      lockSettings(state.settings);
      setStatus("stored", `Stored here: ${state.runs} runs of this suite (started ${new Date(state.meta.created_unix_ms).toLocaleString()}). Start continues them with the same settings; Clear discards them.`);
    }
    drawNow();
    state.shaders = await loadShaders();
    log(`loaded in ${(performance.now() - t0).toFixed(1)} ms (${DATA.tests.length} tests)`);
    if (navigator.gpu) {
      // The adapter before any run; the device is opened by Start.
      const info = await AxbGpu.peek();
      if (info) showDevice(info);
      else setStatus("canary", "WebGPU is present but offers no adapter (the GPU or its driver is blocked or missing): Start will say more.", "bad");
    } else {
      await recordEvent("unsupported", "this browser has no WebGPU (navigator.gpu is missing): use a recent Chrome, Edge, Safari or Firefox with WebGPU enabled", {}, false);
      $("start").disabled = true;
    }
    document.body.dataset.ready = "1";
    if (opts.autorun) {
      const status = navigator.gpu ? await start() : "unsupported";
      if (opts.send) {
        const sent = await send();
        if (opts.log) console.log("axb-sent: " + sent);
      }
      logFile(status);
    }
  }

  init().catch((e) => {
    message("the page failed to start: " + (e && e.message ? e.message : e), "bad");
    logFile("error");
  });
})();

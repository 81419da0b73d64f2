// The SIMT-Step page (backends emit --target wgsl on kernel programs with
// outcome assertions; docs/KERNEL.md §2.10). TESTS (above) holds each
// test's SIMT form WGSL, its launch, where each observed term is read, and
// the outcomes the oracle allows under CM, SM, SCF and SSO. The page runs
// every test RUNS times when the adapter offers WebGPU's `subgroups`
// feature, prints one result line a run (what `backends import --simt`
// reads), and says which models the outcomes seen are consistent with.
// Console lines for tests: `axb-webgpu: ` messages, `axb-file: ` result
// lines, `axb-answer: ` one per model, `axb-end: ` last.
"use strict";
const MODELS = ["CM", "SM", "SCF", "SSO"];

function say(msg) {
  console.log("axb-webgpu: " + msg);
  const p = document.createElement("p");
  p.textContent = msg;
  document.getElementById("log").appendChild(p);
}

// The outcome of one run: each observed term's value modulo `values`.
function outcomeOf(t, mem, regs) {
  return t.observe
    .map((o) => o.name + "=" + ((o.regs ? regs[o.index] : mem[o.index]) % t.values))
    .join(" ");
}

// One result line, as the CUDA host prints it.
function resultLine(t, run, ends, outcome) {
  const total = t.workgroups * t.invocations;
  const terminated = ends[0] === total;
  return JSON.stringify({
    test: t.name, run, terminated, finished: ends[0], stopped: ends[1],
    unsupported: ends[2] !== 0, outcome: terminated && ends[2] === 0 ? outcome : "",
  });
}

// Per model, the outcomes seen that it forbids: [{model, forbidden: [..]}].
function judge(tests, lines) {
  const byName = new Map(tests.map((t) => [t.name, t]));
  return MODELS.map((m) => {
    const forbidden = [];
    for (const l of lines) {
      const r = JSON.parse(l);
      if (!r.terminated || r.unsupported || r.outcome === "") continue;
      const t = byName.get(r.test);
      if (!t.allowed[m].includes(r.outcome)) {
        const k = r.test + ": " + r.outcome;
        if (!forbidden.includes(k)) forbidden.push(k);
      }
    }
    return { model: m, forbidden };
  });
}

function answer(verdicts) {
  const ok = verdicts.filter((v) => v.forbidden.length === 0).map((v) => v.model);
  for (const v of verdicts) {
    const text = v.model + " " + (v.forbidden.length ? "violated by " + v.forbidden.join("; ") : "consistent");
    console.log("axb-answer: " + text);
    const p = document.createElement("p");
    p.textContent = text;
    document.getElementById("log").appendChild(p);
  }
  say("Consistent with: " + (ok.length ? ok.join(", ") : "none of CM, SM, SCF, SSO") + ".");
}

async function runTest(device, t, runs, lines) {
  const module = device.createShaderModule({ code: t.wgsl });
  const pipeline = await device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" } });
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
  const sizes = [t.init.length, t.regWords, 3];
  for (let run = 0; run < runs; run++) {
    const bufs = sizes.map((n) => device.createBuffer({ size: 4 * n, usage }));
    device.queue.writeBuffer(bufs[0], 0, new Uint32Array(t.init));
    const reads = sizes.map((n) => device.createBuffer({ size: 4 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
    const bind = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: bufs.map((buffer, binding) => ({ binding, resource: { buffer } })) });
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(t.workgroups);
    pass.end();
    bufs.forEach((b, k) => enc.copyBufferToBuffer(b, 0, reads[k], 0, 4 * sizes[k]));
    device.queue.submit([enc.finish()]);
    const got = [];
    for (const r of reads) {
      await r.mapAsync(GPUMapMode.READ);
      got.push(new Uint32Array(r.getMappedRange().slice(0)));
      r.unmap();
    }
    const line = resultLine(t, run, got[2], outcomeOf(t, got[0], got[1]));
    console.log("axb-file: " + line);
    lines.push(line);
  }
}

// `#selftest`: the recording and judging logic on made-up runs of the
// first test, no GPU: each allowed outcome of SSO once.
function selftest() {
  const t = TESTS[0];
  const lines = t.allowed.SSO.map((o, run) => {
    const mem = new Array(t.init.length).fill(0), regs = new Array(t.regWords).fill(0);
    for (const kv of o.split(" ")) {
      const [name, v] = kv.split("=");
      const ob = t.observe.find((x) => x.name === name);
      (ob.regs ? regs : mem)[ob.index] = Number(v) + t.values; // modulo values
    }
    return resultLine(t, run, [t.workgroups * t.invocations, 0, 0], outcomeOf(t, mem, regs));
  });
  lines.forEach((l) => console.log("axb-file: " + l));
  answer(judge(TESTS, lines));
}

async function main() {
  const frag = new URLSearchParams(location.hash.slice(1));
  const runs = Number(frag.get("runs") || 100);
  say(TESTS.length + " SIMT-Step tests, " + runs + " runs each.");
  if (frag.has("selftest")) {
    selftest();
    return;
  }
  if (!navigator.gpu) {
    say("This browser has no WebGPU (navigator.gpu is missing): the SIMT-Step tests cannot run here.");
    return;
  }
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) {
    say("No WebGPU adapter: the SIMT-Step tests cannot run here.");
    return;
  }
  if (!adapter.features.has("subgroups")) {
    say("This browser's WebGPU adapter does not offer the `subgroups` feature: the SIMT-Step tests (subgroup operations, WGSL `enable subgroups;`) cannot run here.");
    return;
  }
  const device = await adapter.requestDevice({ requiredFeatures: ["subgroups"] });
  const lines = [];
  for (const t of TESTS) {
    await runTest(device, t, runs, lines);
  }
  document.getElementById("lines").textContent = lines.join("\n") + "\n";
  say("Save the result lines below as a file and run: backends import --simt --target webgpu SUITE --lines FILE -o results/simt --name DEVICE");
  answer(judge(TESTS, lines));
}

main()
  .catch((e) => say("error: " + e))
  .finally(() => console.log("axb-end: done"));

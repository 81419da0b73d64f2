// ---------------------------------------------------------------------------
// (A template: `backends` embeds it, with the canary shaders in place of
// the @CANARY@ comment, in the page of `backends emit --target webgpu` and in
// the page of `synth explorer`: one runner for both.)
//
// The WebGPU runner: runs the WGSL shaders of `backends emit --target wgsl`
// on this browser's GPU. A shader's first line says how to run it:
//   // axb-run: mapping=M instances=I workgroups=W words=N test=NAME
// A run zeroes N words of memory and the four counters of how threads end
// (exhausted, stopped, finished, early), sets the iteration budget, dispatches
// W workgroups of one invocation and reads the counters back. WebGPU cannot
// write a buffer while a dispatch runs, so the budget is what ends a spinning
// run: a thread that spends it counts itself `exhausted`, and every other
// thread then leaves (`stopped`); the run counts as non-terminating.
//
// Before any run, `canary` dispatches one thread waiting for a write nobody
// makes: it must spend its budget. A device that ends it (`finished`) or that
// leaves its loop early (`early`) ends loops by itself, and no run on it can
// show non-termination. `calibrate` turns the budget into a time: it runs the
// canary on 65535 workgroups (every one waiting, so the budget check is as
// contended as it gets) with growing budgets and scales the budget so that a
// spinning run takes about the time asked for.
//
// Errors are `AxbGpuError`s with a `kind`: "unsupported" (no WebGPU, no
// adapter), "lost" (the device was lost), "out-of-memory", "validation",
// "internal", "compile" (a shader did not compile), "device" (counters that
// do not add up: the device did not run every workgroup).
// ---------------------------------------------------------------------------
"use strict";

const AxbGpu = (() => {
  // The canary shaders, `plain` (one workgroup) and `wide` (round-robin,
  // 65535 workgroups), as `backends emit --target wgsl` writes them.
  const CANARY = /*@CANARY@*/ null;

  class AxbGpuError extends Error {
    constructor(kind, message) {
      super(message);
      this.kind = kind;
    }
  }

  // The `axb-run:` line of a shader, as an object; throws on a shader
  // without one.
  function header(wgsl) {
    const first = wgsl.slice(0, wgsl.indexOf("\n"));
    const m = /^\/\/ axb-run: mapping=(\S+) instances=(\d+) workgroups=(\d+) words=(\d+) test=(.*)$/.exec(first);
    if (!m) throw new AxbGpuError("compile", "not a shader of `backends emit --target wgsl` (no axb-run: line)");
    return { mapping: m[1], instances: +m[2], workgroups: +m[3], words: +m[4], test: m[5] };
  }

  // What this browser and adapter are, for the result file.
  function describe(adapter, info) {
    const pick = (o, keys) => Object.fromEntries(keys.filter((k) => o && o[k] !== undefined).map((k) => [k, o[k]]));
    return {
      vendor: info.vendor || "",
      architecture: info.architecture || "",
      device: info.device || "",
      description: info.description || "",
      fallback_adapter: !!(info.isFallbackAdapter || adapter.isFallbackAdapter),
      limits: pick(adapter.limits, ["maxComputeWorkgroupsPerDimension", "maxStorageBufferBindingSize", "maxBufferSize"]),
      user_agent: typeof navigator !== "undefined" ? navigator.userAgent : "",
    };
  }

  // A GPU device and the buffers every run uses.
  class Gpu {
    constructor(adapter, device, info) {
      this.adapter = adapter;
      this.device = device;
      this.info = describe(adapter, info);
      this.lost = null; // the GPUDeviceLostInfo, once lost
      this.onLost = null;
      this.lostPromise = device.lost.then((l) => {
        this.lost = l;
        if (this.onLost) this.onLost(l);
      });
      this.words = 0;
      this.mem = null;
      const U = GPUBufferUsage;
      this.ends = device.createBuffer({ size: 16, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
      this.params = device.createBuffer({ size: 16, usage: U.UNIFORM | U.COPY_DST });
      this.readback = device.createBuffer({ size: 16, usage: U.MAP_READ | U.COPY_DST });
      this.layout = device.createBindGroupLayout({
        entries: [0, 1, 2].map((binding) => ({
          binding,
          visibility: GPUShaderStage.COMPUTE,
          buffer: { type: binding === 2 ? "uniform" : "storage" },
        })),
      });
      this.pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [this.layout] });
      this.bindGroup = null;
    }

    lostError() {
      const l = this.lost;
      return new AxbGpuError("lost", `the GPU device was lost (${l.reason || "unknown reason"}): ${l.message || "no message"}`);
    }

    // Runs `body` inside error scopes; a GPU error becomes an AxbGpuError.
    async scoped(what, body) {
      const d = this.device;
      d.pushErrorScope("internal");
      d.pushErrorScope("out-of-memory");
      d.pushErrorScope("validation");
      let value, thrown = null;
      try {
        value = await body();
      } catch (e) {
        thrown = e;
      }
      const errors = [];
      for (const kind of ["validation", "out-of-memory", "internal"]) {
        const e = await d.popErrorScope().catch(() => null);
        if (e) errors.push([kind, e.message]);
      }
      // An error may be the first sign of a lost device, which says so soon
      // after: the loss is the error to report.
      if ((thrown || errors.length) && !this.lost) {
        await Promise.race([this.lostPromise, new Promise((r) => setTimeout(r, 500))]);
      }
      if (this.lost) throw this.lostError();
      if (errors.length) throw new AxbGpuError(errors[0][0], `${what}: ${errors[0][0]} error: ${errors[0][1]}`);
      if (thrown) throw thrown;
      return value;
    }

    // The memory buffer, grown to at least `words` words.
    ensureMemory(words) {
      if (this.mem && this.words >= words) return;
      if (this.mem) this.mem.destroy();
      this.words = Math.max(words, 1);
      this.mem = this.device.createBuffer({
        size: this.words * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      this.bindGroup = this.device.createBindGroup({
        layout: this.layout,
        entries: [
          { binding: 0, resource: { buffer: this.mem } },
          { binding: 1, resource: { buffer: this.ends } },
          { binding: 2, resource: { buffer: this.params } },
        ],
      });
    }

    // A shader compiled into a pipeline, with its header: what `run` takes.
    async prepare(wgsl) {
      const h = header(wgsl);
      return this.scoped(`compiling ${h.test} (${h.mapping})`, async () => {
        const module = this.device.createShaderModule({ code: wgsl });
        const info = await module.getCompilationInfo();
        const errors = info.messages.filter((m) => m.type === "error");
        if (errors.length) {
          throw new AxbGpuError(
            "compile",
            `${h.test} (${h.mapping}) does not compile: ` +
              errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join("; ")
          );
        }
        const pipeline = await this.device.createComputePipelineAsync({
          layout: this.pipelineLayout,
          compute: { module, entryPoint: "main" },
        });
        return { header: h, pipeline };
      });
    }

    // One run of a prepared shader with `budget` iterations per thread:
    // the counters, the elapsed time (submit to read-back) and whether it
    // terminated (every workgroup finished).
    async run(prepared, budget) {
      if (this.lost) throw this.lostError();
      const h = prepared.header;
      return this.scoped(`running ${h.test} (${h.mapping})`, async () => {
        const d = this.device;
        this.ensureMemory(h.words);
        d.queue.writeBuffer(this.params, 0, new Uint32Array([budget >>> 0, 0, 0, 0]));
        const enc = d.createCommandEncoder();
        enc.clearBuffer(this.mem, 0, Math.max(h.words, 1) * 4);
        enc.clearBuffer(this.ends, 0, 16);
        const pass = enc.beginComputePass();
        pass.setPipeline(prepared.pipeline);
        pass.setBindGroup(0, this.bindGroup);
        pass.dispatchWorkgroups(h.workgroups);
        pass.end();
        enc.copyBufferToBuffer(this.ends, 0, this.readback, 0, 16);
        const t0 = performance.now();
        d.queue.submit([enc.finish()]);
        try {
          await this.readback.mapAsync(GPUMapMode.READ);
        } catch (e) {
          // A lost device rejects the read-back first and says why soon after.
          await Promise.race([this.lostPromise, new Promise((r) => setTimeout(r, 1000))]);
          if (this.lost) throw this.lostError();
          throw new AxbGpuError("internal", `${h.test} (${h.mapping}): reading the result back failed: ${e.message}`);
        }
        const elapsed_ms = performance.now() - t0;
        const [exhausted, stopped, finished, early] = new Uint32Array(this.readback.getMappedRange().slice(0));
        this.readback.unmap();
        if (exhausted + stopped + finished + early !== h.workgroups) {
          throw new AxbGpuError(
            "device",
            `${h.test} (${h.mapping}): ${exhausted + stopped + finished + early} of ${h.workgroups} workgroups reported how they ended ` +
              `(exhausted ${exhausted}, stopped ${stopped}, finished ${finished}, early ${early}): the device did not run the whole dispatch`
          );
        }
        return {
          terminated: finished === h.workgroups,
          exhausted,
          stopped,
          finished,
          early,
          elapsed_ms,
        };
      });
    }

    // The canary: one thread waiting for a write nobody makes, run with
    // `budget`, or 2^20 if that is more: a device that ends loops after a
    // fixed count (llvmpipe: 65535) shows it only to a canary that would
    // spin longer (CANARY_MIN_BUDGET in backends/src/target/webgpu.rs).
    // `ok` when it spent its budget.
    async canary(budget) {
      budget = Math.max(budget, 1 << 20);
      const p = await this.prepare(CANARY.plain);
      const r = await this.run(p, budget);
      const ok = r.exhausted === 1 && r.finished === 0 && r.early === 0;
      return Object.assign(r, { ok, budget });
    }

    // The budget for runs of about `targetMs`: the wide canary's time
    // grows with the budget; the budget is scaled to the target from a run
    // of at least a quarter of it. `step(budget, ms)` sees each try.
    async calibrate(targetMs, step) {
      const p = await this.prepare(CANARY.wide);
      await this.run(p, 1); // a first dispatch may compile lazily: not overhead
      let budget = 1024;
      let r = await this.run(p, budget);
      const overhead = r.elapsed_ms;
      if (step) step(budget, r.elapsed_ms);
      const max = 0xffffffff;
      while (r.elapsed_ms < Math.max(targetMs / 4, overhead * 4) && budget < max) {
        const grow = r.elapsed_ms > 0 ? Math.min(16, Math.max(2, targetMs / 2 / r.elapsed_ms)) : 16;
        budget = Math.min(max, Math.ceil(budget * grow));
        r = await this.run(p, budget);
        if (step) step(budget, r.elapsed_ms);
        if (r.exhausted === 0) break; // the canary ended: calibration is meaningless
      }
      // A spinning run takes about overhead + budget / rate.
      const rate = budget / Math.max(r.elapsed_ms - overhead, r.elapsed_ms / 4, 0.001); // iterations per ms
      const chosen = Math.max(1, Math.min(max, Math.round(rate * targetMs)));
      const check = await this.run(p, chosen);
      if (step) step(chosen, check.elapsed_ms);
      return {
        target_ms: targetMs,
        budget: chosen,
        iterations_per_ms: Math.round(rate),
        overhead_ms: Math.round(overhead * 1000) / 1000,
        run_ms: Math.round(check.elapsed_ms * 1000) / 1000,
        exhausted: check.exhausted > 0,
      };
    }
  }

  // A device on this browser's preferred adapter, or an AxbGpuError of
  // kind "unsupported" saying why there is none.
  async function open() {
    if (typeof navigator === "undefined" || !navigator.gpu) {
      throw new AxbGpuError(
        "unsupported",
        "this browser has no WebGPU (navigator.gpu is missing): use a recent Chrome, Edge, Safari or Firefox with WebGPU enabled"
      );
    }
    let adapter = null;
    try {
      adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
    } catch (e) {
      throw new AxbGpuError("unsupported", `requesting a WebGPU adapter failed: ${e.message}`);
    }
    if (!adapter) {
      throw new AxbGpuError("unsupported", "WebGPU is present but offers no adapter (the GPU or its driver is blocked or missing)");
    }
    const info = adapter.info || (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : {});
    if (adapter.limits.maxComputeWorkgroupsPerDimension < 65535) {
      throw new AxbGpuError("unsupported", `the adapter allows only ${adapter.limits.maxComputeWorkgroupsPerDimension} workgroups per dispatch dimension; the tests need 65535`);
    }
    let device;
    try {
      device = await adapter.requestDevice();
    } catch (e) {
      throw new AxbGpuError("unsupported", `the adapter gave no device: ${e.message}`);
    }
    return new Gpu(adapter, device, info);
  }

  // The preferred adapter, described (as `Gpu.info`), without opening a
  // device; null when there is none.
  async function peek() {
    if (typeof navigator === "undefined" || !navigator.gpu) return null;
    try {
      const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
      if (!adapter) return null;
      const info = adapter.info || (adapter.requestAdapterInfo ? await adapter.requestAdapterInfo() : {});
      return describe(adapter, info);
    } catch (e) {
      return null;
    }
  }

  // What a canary result means, in words, for a refused device.
  function canaryRefusal(c) {
    const how = c.finished ? "ended it (the memory it waits on changed?)" : c.early ? "left its loop with budget to spare" : "did not spend the budget";
    return (
      `the device ${how} on the canary, one thread waiting for a write nobody makes (budget ${c.budget}, ` +
      `${c.elapsed_ms.toFixed(1)} ms): it leaves loops by itself (as Mesa's llvmpipe does after 65535 iterations), ` +
      "so no run on it can show non-termination"
    );
  }

  return { open, peek, header, canaryRefusal, AxbGpuError, CANARY };
})();

// Runs the int8 kernels' wasm build (lib.rs) in Node: the SIMD kernel must equal the portable
// one on every shape (exit 1 otherwise), then each BERT-shaped product is timed through the
// SIMD int8 kernel, the portable int8 kernel and the f32 GEMM, one thread, best of N runs.
// Usage: node run.mjs PATH.wasm [--check-only]
import { readFileSync } from "node:fs";

const [path, flag] = process.argv.slice(2);
const { instance } = await WebAssembly.instantiate(readFileSync(path), {
  env: { now_ms: () => performance.now() },
});
const { check, bench } = instance.exports;

const failures = check();
if (failures === 1000) {
  console.error("FAIL: the SIMD kernel is not the one the build picks (built without +simd128?)");
  process.exit(1);
}
if (failures !== 0) {
  console.error(`FAIL: the SIMD and portable int8 kernels differ on ${failures} shapes`);
  process.exit(1);
}
console.log("ok: the WebAssembly SIMD int8 kernel equals the portable kernel on every shape");
if (flag === "--check-only") process.exit(0);

// rows: a query (12 tokens), and a step of the page's corpus encoding (4 passages ~ 400 rows).
const shapes = [
  [12, 384, 1152, "query, Q K V"],
  [12, 384, 1536, "query, FFN in"],
  [12, 1536, 384, "query, FFN out"],
  [400, 384, 1152, "corpus step, Q K V"],
  [400, 384, 1536, "corpus step, FFN in"],
  [400, 1536, 384, "corpus step, FFN out"],
];
const rows = [];
for (const [m, k, n, what] of shapes) {
  const reps = m > 100 ? 5 : 40;
  const simd = bench(m, k, n, reps, 0);
  const portable = bench(m, k, n, reps, 1);
  const f32 = bench(m, k, n, reps, 2);
  const gops = (ms) => ((2 * m * k * n) / ms / 1e6).toFixed(1);
  rows.push({ what, m, k, n, simd_ms: simd, portable_ms: portable, f32_ms: f32 });
  console.log(
    `${what.padEnd(22)} ${m}x${k}x${n}: int8 SIMD ${simd.toFixed(2)} ms (${gops(simd)} GOP/s), ` +
      `int8 portable ${portable.toFixed(2)} ms, f32 GEMM ${f32.toFixed(2)} ms (${gops(f32)} GFLOP/s); ` +
      `f32 / int8 SIMD = ${(f32 / simd).toFixed(2)}x`,
  );
}
console.log(JSON.stringify(rows));

// The project's web demo against transformers.js in one headless Chromium run (run by
// `cargo xtask bench-web`):
//   node bench.mjs URL SITE_DIR OUT_DIR
// SITE_DIR/bench/cases.json holds the query texts and the native engine's top 10 for each.
// For each system (the project's page on CPU wasm, in int8 with its default workers and with one, and in f32 arithmetic; transformers.js on ONNX Runtime Web's CPU
// wasm with the fp32 and the int8 export), in a fresh browser context:
// - cold: navigation to the first result (model download, corpus encoding, one query);
// - the corpus encoding time, and every query's latency (encode one text, rank the corpus),
//   median and p95 over the cases; top-10 agreement with the native engine;
// - bytes fetched, split into code (js, wasm) and model files, raw and gzip (level 6, what a
//   static host's compression gives);
// - warm: a second navigation in the same context (browser caches filled).
// Writes OUT_DIR/summary.json and prints it.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const [url, siteDir, outDir] = process.argv.slice(2);
if (!url || !siteDir || !outDir) {
  console.error('usage: node bench.mjs URL SITE_DIR OUT_DIR');
  process.exit(2);
}
const base = url.endsWith('/') ? url : `${url}/`;
const cases = JSON.parse(fs.readFileSync(path.join(siteDir, 'bench/cases.json'), 'utf8'));
fs.mkdirSync(outDir, { recursive: true });
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-gpu'],
});

const gzipCache = new Map();
/** Raw and gzip bytes of the files a page fetched, code and model apart. */
function bytesOf(entries) {
  const out = { code_raw: 0, code_gzip: 0, model_raw: 0, model_gzip: 0, other_raw: 0, files: [] };
  const seen = new Set();
  for (const e of entries) {
    const rel = decodeURIComponent(new URL(e.name).pathname).replace(/^\/+/, '');
    const file = path.join(siteDir, rel);
    if (seen.has(rel) || !fs.existsSync(file) || !fs.statSync(file).isFile()) continue;
    seen.add(rel);
    const raw = fs.statSync(file).size;
    if (!gzipCache.has(file)) gzipCache.set(file, zlib.gzipSync(fs.readFileSync(file), { level: 6 }).length);
    const gz = gzipCache.get(file);
    const kind = /\.(m?js|wasm)$/.test(rel) ? 'code'
      : /(safetensors|onnx|tokenizer|config|vocab|index\.json|special_tokens)/.test(rel) ? 'model' : 'other';
    if (kind === 'other') out.other_raw += raw;
    else { out[`${kind}_raw`] += raw; out[`${kind}_gzip`] += gz; }
    out.files.push({ file: rel, raw, gzip: gz, kind });
  }
  return out;
}

const resources = (page) => page.evaluate(() => performance.getEntriesByType('resource').map((e) => ({ name: e.name })));
const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };
const overlap = (a, b) => a.filter((x) => b.includes(x)).length / b.length;
function latencySummary(ms, tops) {
  return {
    queries: ms.length,
    median_ms: quantile(ms, 0.5),
    p95_ms: quantile(ms, 0.95),
    top10_agreement: tops.reduce((s, t, i) => s + overlap(t, cases[i].native_top10), 0) / tops.length,
    top1_agreement: tops.reduce((s, t, i) => s + (t[0] === cases[i].native_top10[0] ? 1 : 0), 0) / tops.length,
  };
}

/** The project's page: CPU wasm computing in `precision` (int8, the page's default, or f32), the
 * corpus encoded by `workers` Web Workers (undefined: as many as the page affords this machine),
 * the query text in the query box, both instruction boxes empty. */
async function ours(precision, workers) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const logs = [];
  page.on('console', (m) => logs.push(m.text()));
  const status = () => page.evaluate(() => document.querySelector('[data-testid=model-status]')?.textContent);
  const waitReady = () => page.waitForFunction(() => {
    const s = document.querySelector('[data-testid=model-status]')?.textContent;
    if (s === 'error') throw new Error(document.querySelector('[role=alert]')?.textContent);
    return s === 'ready';
  }, null, { timeout: 900_000, polling: 20 });
  const params = {
    backend: 'cpu',
    ...(precision === 'f32' ? { precision: 'f32' } : {}),
    ...(workers ? { workers: String(workers) } : {}),
  };
  const query = (text) => `${base}?${new URLSearchParams({ q: text, i: '', r: '', ...params })}`;
  const t0 = Date.now();
  await page.goto(query(cases[0].text));
  await waitReady();
  const cold = Date.now() - t0;
  const fetched = bytesOf(await resources(page));
  const grab = (re) => logs.map((l) => l.match(re)).filter(Boolean).map((m) => Number(m[1]));
  const corpusMs = grab(/corpus of \d+ passages encoded in (\d+) ms/)[0];
  const workersUsed = grab(/(\d+) encoding worker\(s\) ready/)[0];
  const top10 = () => page.$$eval('[data-testid=ranking-query] [data-testid=result]',
    (els) => els.slice(0, 10).map((e) => e.getAttribute('data-doc-id')));
  const ms = [];
  const tops = [];
  for (const c of cases) {
    const before = grab(/query encoded and ranked in ([\d.]+) ms/).length;
    await page.getByTestId('query').fill(c.text);
    const deadline = Date.now() + 60_000;
    while (grab(/query encoded and ranked in ([\d.]+) ms/).length <= before || (await status()) !== 'ready') {
      if (Date.now() > deadline) throw new Error(`no ranking for ${c.text}`);
      await page.waitForTimeout(10);
    }
    const all = grab(/query encoded and ranked in ([\d.]+) ms/);
    ms.push(all[all.length - 1]);
    tops.push(await top10());
  }
  const encodedLines = logs.filter((l) => /query encoded and ranked/.test(l)).slice(-cases.length);
  const second = await context.newPage();
  const t1 = Date.now();
  await second.goto(query(cases[0].text));
  await second.waitForFunction(() => document.querySelector('[data-testid=model-status]')?.textContent === 'ready',
    null, { timeout: 900_000, polling: 20 });
  const warm = Date.now() - t1;
  await context.close();
  return {
    system: `project (burn-flex, CPU wasm, int8 weights, ${precision} arithmetic, ${workersUsed} encoding worker(s))`,
    encoding_workers: workersUsed, cold_first_result_ms: cold, warm_first_result_ms: warm,
    corpus_encode_ms: corpusMs, bytes: fetched, ...latencySummary(ms, tops),
    texts_encoded_per_query: encodedLines.map((l) => l.match(/\((\d+) of 3/)?.[1]).join(''),
  };
}

/** transformers.js with the ONNX export in `dtype` (fp32 or q8). */
async function tjs(dtype) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const t0 = Date.now();
  await page.goto(`${base}tjs.html?dtype=${dtype}`);
  await page.waitForFunction(() => window.__bench, null, { timeout: 900_000, polling: 20 });
  const info = await page.evaluate(() => window.__bench);
  if (info.error) throw new Error(`transformers.js ${dtype}: ${info.error} ${errors.join(' ')}`);
  const first = await page.evaluate((t) => window.search(t), cases[0].text);
  const cold = Date.now() - t0;
  const fetched = bytesOf(await resources(page));
  const ms = [];
  const tops = [];
  for (const c of cases) {
    const r = await page.evaluate((t) => window.search(t), c.text);
    ms.push(r.ms);
    tops.push(r.top);
  }
  const second = await context.newPage();
  const t1 = Date.now();
  await second.goto(`${base}tjs.html?dtype=${dtype}`);
  await second.waitForFunction(() => window.__bench, null, { timeout: 900_000, polling: 20 });
  await second.evaluate((t) => window.search(t), cases[0].text);
  const warm = Date.now() - t1;
  await context.close();
  return {
    system: `transformers.js 4.3.1 (ONNX Runtime Web, CPU wasm, ${dtype === 'q8' ? 'int8' : 'fp32'})`,
    cold_first_result_ms: cold, warm_first_result_ms: warm, model_load_ms: info.load_ms,
    corpus_encode_ms: info.corpus_ms, first_query_ms: first.ms, bytes: fetched, ...latencySummary(ms, tops),
  };
}

const summary = { url, cases: cases.length, chromium: browser.version(), systems: [] };
try {
  const systems = [() => ours('int8'), () => ours('int8', 1), () => ours('f32'), () => tjs('fp32'), () => tjs('q8')];
  for (const run of systems) {
    const r = await run();
    summary.systems.push(r);
    const { bytes, ...shown } = r;
    console.log(JSON.stringify({ ...shown, code_gzip: bytes.code_gzip, model_gzip: bytes.model_gzip }));
  }
} finally {
  fs.writeFileSync(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2));
  await browser.close();
}

// End-to-end test of the web demo in Debian's headless Chromium (run by `cargo xtask e2e`):
//   node app.test.mjs URL NATIVE_JSON ARTIFACTS_DIR
// 1. loads the page and waits for `ready`; no task of the page's thread computes over 200 ms
//    and none holds it over 1 s (Chromium's trace of the renderer's main thread: `traceTasks`)
//    from navigation to ready (the wasm started, the model downloaded and hashed, built and
//    the corpus encoded in Web Workers, the first rankings rendered) and while a query is
//    typed a key at a time;
// 2. for each case, types query / instruction / reversed instruction and checks that the top-5
//    of each column equals the native engine's ranking (trainer search, CPU, int8 arithmetic as
//    the page's CPU backend; the WebGPU checks compare with f32);
// 3. toggles a judgment and checks that a metric changes;
// 4. opens teach mode on p-MRR and checks the breakdown;
// 5. reloads from the shared URL and checks the state came back (and the model came from cache);
// 6. uploads a corpus with <img onerror> and <script> payloads: rendered as text, nothing runs;
// 7. loads the embed example page (the demo in an iframe inside a mock docs page);
// 8. loads the custom-element example (<ifir-demo> with query and instruction attributes, and
//    one with `train`, which shows the learn-live panel);
// 9. switches the model picker to a fine-tuned model and compares with the native engine;
// 10. faults: corrupt cached model file and embeddings (fetched and encoded again), a model
//     file that does not match models/index.json (clear message), a 20 MB upload and a binary
//     file (refused by name, the page stays usable);
// 11a. learn live on the CPU: three steps in a Web Worker, compared with `trainer lesson`
//     (and 11b, on WebGPU, in the SwiftShader browser);
// 11. in a second Chromium with a software WebGPU adapter (SwiftShader): the page picks WebGPU,
//     encodes the corpus on it, ranks as the native engine; switching to the CPU ranks the same;
//     a WebGPU device that cannot be created falls back to the CPU with a note, and so does one
//     lost mid-way (destroyed while the corpus encodes): the page re-encodes on the CPU and
//     ranks as the native engine.
// Screenshots and a JSON summary go to ARTIFACTS_DIR.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';

const [url, nativePath, outDir] = process.argv.slice(2);
if (!url || !nativePath || !outDir) {
  console.error('usage: node app.test.mjs URL NATIVE_JSON ARTIFACTS_DIR');
  process.exit(2);
}
const native = JSON.parse(fs.readFileSync(nativePath, 'utf8'));
fs.mkdirSync(outDir, { recursive: true });
const summary = { url, checks: [] };
let failures = 0;
// The page aims at 100 ms of computing for one task of its thread (the time a user reads as an
// instant response); the check's budget is wider (below). A task's wall-clock time is not the measure: the CI machine has 2
// cores, the page starts one encoding worker per core, and Chromium's own processes and the
// test's run beside them, so the page's thread is descheduled inside its tasks by amounts no
// budget can bound (it failed CI at 110 ms, then at 173 ms with a 150 ms budget). So each task
// is measured by the CPU time of the renderer's main thread during it (Chromium's trace,
// `tdur`), which descheduling does not change: work that belongs in a worker (building the
// model, encoding) takes seconds of it and fails. A thread blocked without computing (a
// synchronous wait on a worker) uses no CPU, so no task may hold the thread over 1 s either:
// past that a user calls the page frozen, and no descheduling on a 2-core machine comes near.
// The CPU budget is 200 ms: on the slowest CI machines (2-core Xeons) the heaviest task while
// the model loads measured 79, 111 and 126 ms of CPU in three runs of one build, so 100 ms failed
// by chance; the work this check exists to catch on the page's thread (building the model,
// encoding) takes seconds there, ten times the budget.
const TASK_CPU_MS = 200;
const TASK_WALL_MS = 1000;
const TASK_BUDGET = `${TASK_CPU_MS} ms of CPU, ${TASK_WALL_MS} ms of wall clock`;

// Runs `work` while Chromium traces; returns the tasks of the page's main thread
// (`CrRendererMain` of the renderer processes that show the test's origin: the trace also holds
// Chromium's own, such as its WebUI renderer starting beside the first page) over 50 ms of
// wall clock or CPU, as { wall, cpu, inside } in ms, in order. `inside` names the longest
// events the task ran (`insideOf`), so that a task over the budget says what it was.
async function traceTasks(p, work) {
  const b = p.context().browser();
  await b.startTracing(p, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel',
    'v8', 'v8.wasm', 'disabled-by-default-v8.gc'] });
  let trace;
  try {
    await work();
  } finally {
    trace = JSON.parse((await b.stopTracing()).toString());
  }
  const events = trace.traceEvents ?? trace;
  const origin = new URL(url).origin;
  const pages = new Set();
  for (const e of events) {
    const frames = e.name === 'TracingStartedInBrowser' ? e.args?.data?.frames ?? []
      : e.name === 'FrameCommittedInBrowser' ? [e.args?.data ?? {}] : [];
    for (const f of frames) if (f.url?.startsWith(origin)) pages.add(f.processId);
  }
  if (pages.size === 0) throw new Error(`the trace shows no renderer of ${origin}`);
  const main = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain' && pages.has(e.pid))
    .map((e) => `${e.pid}:${e.tid}`));
  const mainEvents = events.filter((e) => e.ph === 'X' && main.has(`${e.pid}:${e.tid}`));
  return mainEvents.filter((e) => e.name === 'RunTask')
    .sort((a, b) => a.ts - b.ts)
    .map((e) => ({ task: e, wall: Math.round(e.dur / 1000), cpu: Math.round((e.tdur ?? e.dur) / 1000) }))
    .filter((t) => t.wall > 50 || t.cpu > 50)
    .map(({ task, wall, cpu }) => ({ wall, cpu, inside: insideOf(task, mainEvents) }));
}

// The four longest events (by CPU) that ran inside `task` on its thread, each as
// "name what cpu/wall ms", where `what` is what the trace gives: the script, function or event
// type, and for the task itself (`ThreadControllerImpl::RunTask`, the first) the Chromium
// source that posted it. Work no event covers (a wasm call from a promise's callback, say)
// shows as a task whose events add up to less than its own time.
function insideOf(task, events) {
  const end = task.ts + task.dur;
  const what = (e) => {
    const d = e.args?.data ?? {};
    const file = (d.url ?? d.scriptName ?? e.args?.src_file ?? '').split('/').pop();
    return [e.args?.src_func, d.functionName, file, d.type].filter(Boolean).join(' ');
  };
  return events
    .filter((e) => e !== task && e.pid === task.pid && e.tid === task.tid && e.name !== 'RunTask'
      && e.ts >= task.ts && e.ts + (e.dur ?? 0) <= end)
    .sort((a, b) => (b.tdur ?? b.dur ?? 0) - (a.tdur ?? a.dur ?? 0))
    .slice(0, 4)
    .map((e) => `${e.name}${what(e) ? ` (${what(e)})` : ''} ${Math.round((e.tdur ?? e.dur ?? 0) / 1000)}/${Math.round((e.dur ?? 0) / 1000)} ms`);
}
const withinBudget = (tasks) => tasks.every((t) => t.cpu <= TASK_CPU_MS && t.wall <= TASK_WALL_MS);
// The tasks' count, longest CPU and wall times, every task's, and what the heaviest one ran.
const describeTasks = (tasks) => {
  const heaviest = tasks.reduce((a, t) => (a && a.cpu >= t.cpu ? a : t), null);
  return `${tasks.length} task(s) over 50 ms, longest ${Math.max(0, ...tasks.map((t) => t.cpu))} ms of CPU `
    + `and ${Math.max(0, ...tasks.map((t) => t.wall))} ms of wall clock (cpu/wall: ${JSON.stringify(tasks.map((t) => `${t.cpu}/${t.wall}`))})`
    + (heaviest ? `; the heaviest ran ${JSON.stringify(heaviest.inside)}` : '');
};

function check(name, ok, detail = '') {
  summary.checks.push({ name, ok, detail });
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ': ' + detail : ''}`);
  if (!ok) failures++;
}

const baseArgs = ['--no-sandbox', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
const browser = await chromium.launch({ executablePath, args: [...baseArgs, '--disable-gpu'] });
let gpuBrowser = null;
const context = await browser.newContext({ viewport: { width: 1500, height: 1100 } });
await context.addInitScript(() => {
  // When the status first read "encoding corpus ..." and then "ready", on the page's clock.
  window.__status = {};
  new MutationObserver(() => {
    const s = document.querySelector('[data-testid=model-status]')?.textContent ?? '';
    const key = s.startsWith('encoding corpus') ? 'encoding' : s;
    if (!(key in window.__status)) window.__status[key] = performance.now();
  }).observe(document, { subtree: true, childList: true, characterData: true });
});
const page = await context.newPage();
let dialogs = 0;
page.on('dialog', (d) => { dialogs++; d.dismiss().catch(() => {}); });
const logs = [];
page.on('console', (m) => logs.push(`[${m.type()}] ${m.text()}`));
page.on('pageerror', (e) => logs.push(`[pageerror] ${e.message}`));

const status = () => page.getByTestId('model-status').textContent();
async function waitReady(p = page, timeout = 900_000) {
  await p.waitForFunction(
    () => {
      const s = document.querySelector('[data-testid=model-status]')?.textContent;
      if (s === 'error') throw new Error(document.querySelector('[role=alert]')?.textContent);
      return s === 'ready';
    }, null, { timeout, polling: 250 });
}
const top5 = (p, column) => p.$$eval(`[data-testid=ranking-${column}] [data-testid=result]`,
  (els) => els.slice(0, 5).map((e) => e.getAttribute('data-doc-id')));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// The three columns of two rankings agree (key order aside: the native file's keys are sorted).
const sameColumns = (a, b) => ['query', 'instructed', 'reversed'].every((c) => same(a[c], b[c]));
// The page's CPU backend computes in int8, as the native reference does, but the two differ in
// every f32 step around the integer products (GEMM kernels, softmax, GELU, layer norm), and a
// tiny difference can move an activation across a rounding step of the 8-bit grid. So rank i
// of the page may hold any passage whose native score is within INT8_TIE of the native rank
// i's: two passages that near-tie swap. 0.01 is below the noise of the quantisation itself
// (native int8 against native f32 scores differ by up to 0.015 on the demo topics) and far
// below the gaps that decide a ranking (a different passage at rank i fails).
const INT8_TIE = 0.01;
const closeTo = (seen, ids, scores) => seen.length === ids.length && seen.every((id, i) =>
  id in scores && Math.abs(scores[id] - scores[ids[i]]) <= INT8_TIE);
const closeColumns = (a, ids, scores) => ['query', 'instructed', 'reversed'].every((c) => closeTo(a[c], ids[c], scores[c]));

// The three columns' top 5.
const columnsOf = async (p) => ({ query: await top5(p, 'query'), instructed: await top5(p, 'instructed'), reversed: await top5(p, 'reversed') });
const lessonRef = JSON.parse(fs.readFileSync(path.join(outDir, 'native-lesson.json'), 'utf8'));
const lessonTinyRef = JSON.parse(fs.readFileSync(path.join(outDir, 'native-lesson-tiny.json'), 'utf8'));
// The page URL of a lesson reference: its demo topic and case, learn live on.
const lessonUrl = (ref, extra) => `${url}?${new URLSearchParams({
  corpus: ref.corpus, q: ref.case.query, i: ref.case.instruction, r: ref.case.reversed, train: '1', ...extra,
})}`;
// Presses "Train" on page `p` (at `lessonUrl(ref)`), waits for its three steps, and compares
// them with `trainer lesson`'s (`ref`) within `tol` (see 11a).
async function learnLive(p, label, ref, tol) {
  const started = Date.now();
  const long = await traceTasks(p, async () => {
    await p.getByTestId('learn-train').click();
    await p.waitForFunction(() => {
      const s = document.querySelector('[data-testid=learn-status]')?.textContent ?? '';
      if (s.startsWith('error')) throw new Error(s);
      return document.querySelectorAll('[data-testid=learn-step]').length >= 3 && s.startsWith('paused');
    }, null, { timeout: 1_200_000, polling: 500 });
  });
  const ms = Date.now() - started;
  const steps = await p.$$eval('[data-testid=learn-step]', (rows) => rows.map((r) => ({
    loss: Number(r.dataset.loss), loss_after: Number(r.dataset.lossAfter),
    ndcg10_changed: Number(r.dataset.ndcg), p_mrr: Number(r.dataset.pMrr), wise: Number(r.dataset.wise),
  })));
  summary[`learn_${label}`] = { ms, steps, long_tasks: long };
  const native = ref.steps.slice(1);
  const rel = (a, b) => Math.abs(a - b) / Math.max(1, Math.abs(b));
  check(`learn live (${label}): each step lowers the loss of the batch it trained on`,
    steps.length === 3 && steps.every((s) => s.loss_after < s.loss), JSON.stringify(steps));
  check(`learn live (${label}): losses equal trainer lesson's (same files, seed, steps) within ${tol.loss} relative`,
    steps.every((s, i) => rel(s.loss, native[i].loss) <= tol.loss && rel(s.loss_after, native[i].loss_after) <= tol.loss),
    `page ${JSON.stringify(steps.map((s) => [s.loss, s.loss_after]))} native ${JSON.stringify(native.map((s) => [s.loss, s.loss_after]))}`);
  check(`learn live (${label}): held-out nDCG@10, p-MRR and WISE after each step equal trainer lesson's within ${tol.held}`,
    steps.every((s, i) => ['ndcg10_changed', 'p_mrr', 'wise'].every((k) => Math.abs(s[k] - native[i].eval[k]) <= tol.held)),
    `page ${JSON.stringify(steps)} native ${JSON.stringify(native.map((s) => s.eval))}`);
  const trained = await columnsOf(p);
  const near = (seen, ids, scores) => seen.length === ids.length && seen.every((id, i) => id in scores && Math.abs(scores[id] - scores[ids[i]]) <= tol.tie);
  check(`learn live (${label}): the trained columns rank as the native engine with the lesson's model`,
    ['query', 'instructed', 'reversed'].every((c) => near(trained[c], ref.top5[c], ref.scores[c])),
    `page ${JSON.stringify(trained)} native ${JSON.stringify(ref.top5)}`);
  check(`learn live (${label}): no task of the page's thread over ${TASK_BUDGET} while the worker trains`,
    withinBudget(long), `${describeTasks(long)}; 3 steps in ${ms} ms`);
}

try {
  const t0 = Date.now();
  const fromNavigation = await traceTasks(page, async () => {
    await page.goto(url);
    await page.waitForFunction(() => /^encoding corpus/.test(
      document.querySelector('[data-testid=model-status]')?.textContent ?? ''), null, { timeout: 900_000, polling: 20 });
    await waitReady();
  });
  const { encoding: encodingFrom, ready: encodingTo } = await page.evaluate(() => window.__status);
  const coldMs = Date.now() - t0;
  check('page reaches ready', true, `${coldMs} ms from navigation (cold cache)`);
  // Typing: a query a key at a time (each key re-ranks), then ready again.
  const typingFrom = Date.now();
  const whileTyping = await traceTasks(page, async () => {
    await page.getByTestId('query').fill('');
    await page.getByTestId('query').pressSequentially('beginner python tutorial', { delay: 40 });
    await page.waitForTimeout(300);
    await waitReady();
  });
  summary.long_tasks = { from_navigation: fromNavigation, typing: whileTyping, ready_ms: Math.round(encodingTo),
    encoding_ms: Math.round(encodingTo - encodingFrom), typing_ms: Date.now() - typingFrom };
  // On the CPU the page's thread builds no model: the encoding workers build it and encode the
  // corpus and the queries; the page hashes the downloaded files in steps, takes progress
  // messages and the embeddings, then ranks and renders.
  const machine = await page.evaluate(() => ({ cores: navigator.hardwareConcurrency, gb: navigator.deviceMemory }));
  const started = logs.map((l) => l.match(/(\d+) encoding worker\(s\) ready/)).filter(Boolean).map((m) => Number(m[1]));
  check(`no task of the page's thread over ${TASK_BUDGET} from navigation to ready (CPU: the model built and run in workers)`,
    withinBudget(fromNavigation), `${describeTasks(fromNavigation)} in ${Math.round(encodingTo)} ms`);
  check(`no task of the page's thread over ${TASK_BUDGET} while typing`, withinBudget(whileTyping),
    `${describeTasks(whileTyping)} in ${summary.long_tasks.typing_ms} ms`);
  check('backend is shown', ['cpu', 'webgpu'].includes(await page.getByTestId('backend').textContent()),
    await page.getByTestId('backend').textContent());
  check('the CPU backend computes in int8 (WebAssembly SIMD)', await page.getByTestId('precision').textContent() === 'int8',
    await page.getByTestId('precision').textContent());
  // One encoding worker per core the browser reports, at most 4, one per 2 GB where it says.
  const expected = Math.max(1, Math.min(machine.cores, 4, machine.gb ? Math.floor(machine.gb / 2) : 4));
  summary.encoding_workers = { machine, started };
  check('the CPU corpus is encoded by one worker per core the machine affords',
    started.length === 1 && started[0] === expected, `${JSON.stringify(machine)}: started ${JSON.stringify(started)}, expected ${expected}`);
  await page.screenshot({ path: path.join(outDir, '01-ready.png'), fullPage: true });

  // 2. Rankings equal the native engine's.
  for (const [i, ref] of native.entries()) {
    await page.getByTestId('query').fill(ref.case.query);
    await page.getByTestId('instruction').fill(ref.case.instruction);
    await page.getByTestId('reversed-instruction').fill(ref.case.reversed);
    const deadline = Date.now() + 120_000;
    let seen = {};
    while (Date.now() < deadline) {
      await page.waitForTimeout(500);
      if ((await status()) !== 'ready') continue;
      seen = {
        query: await top5(page, 'query'),
        instructed: await top5(page, 'instructed'),
        reversed: await top5(page, 'reversed'),
      };
      if (closeColumns(seen, ref.top5, ref.scores)) break;
    }
    for (const column of ['query', 'instructed', 'reversed']) {
      check(`case ${i + 1} ${column}: top-5 equals the native ranking (int8: near-ties within ${INT8_TIE} may swap)`,
        closeTo(seen[column], ref.top5[column], ref.scores[column]),
        `browser ${JSON.stringify(seen[column])} native ${JSON.stringify(ref.top5[column])}`);
    }
    await page.screenshot({ path: path.join(outDir, `02-case-${i + 1}.png`), fullPage: true });
  }

  // 3. Back to a demo example with judgments; toggling one changes a metric.
  await page.getByLabel('Demo example').selectOption('q01');
  await page.waitForTimeout(1000);
  await waitReady();
  const metric = page.locator('[data-testid=metric][data-metric="ndcg@10"][data-column=instructed]');
  await page.waitForFunction(() => document.querySelector(
    '[data-testid=metric][data-metric="ndcg@10"][data-column=instructed]')?.getAttribute('data-value') !== '');
  const before = await metric.getAttribute('data-value');
  await page.locator('[data-testid=ranking-instructed] [data-testid=result] [data-testid=judge]').first().click();
  await page.waitForFunction((b) => document.querySelector(
    '[data-testid=metric][data-metric="ndcg@10"][data-column=instructed]')?.getAttribute('data-value') !== b,
  before, { timeout: 10_000 }).catch(() => {});
  const after = await metric.getAttribute('data-value');
  check('editing a judgment recomputes nDCG@10', before !== after, `${before} -> ${after}`);
  for (const m of ['p-mrr', 'wise', 'sicr']) {
    const v = await page.locator(`[data-testid=metric][data-metric="${m}"]`).getAttribute('data-value');
    check(`${m} is shown as a raw fraction`, v === '' || (!isNaN(Number(v)) && Math.abs(Number(v)) <= 1), v);
  }

  // 4. Teach mode.
  await page.locator('[data-testid=metric][data-metric="p-mrr"]').click();
  const breakdown = page.getByTestId('breakdown');
  await breakdown.waitFor({ timeout: 5000 }).catch(() => {});
  check('teach mode explains p-MRR', (await breakdown.count()) === 1 &&
    (await breakdown.textContent()).includes('p-MRR'));
  await page.getByRole('button', { name: /guided tour/ }).click();
  check('the guided tour starts', (await page.getByTestId('tour-step').count()) === 1);
  await page.screenshot({ path: path.join(outDir, '03-teach.png'), fullPage: true });

  // 5. The URL carries the state; a reload restores it and loads the model from the cache.
  const shared = page.url();
  check('the URL holds the query', shared.includes('q=') && shared.includes('teach=1'), shared);
  const second = await context.newPage();
  const t1 = Date.now();
  await second.goto(shared);
  await waitReady(second);
  const warmMs = Date.now() - t1;
  check('shared URL restores the query', (await second.getByTestId('query').inputValue()) ===
    await page.getByTestId('query').inputValue());
  const note = await second.getByTestId('cache-note').textContent();
  check('reload loads the model from the browser cache', /cache/.test(note), `${note}; ready in ${warmMs} ms`);
  summary.ready_cold_ms = coldMs;
  summary.ready_warm_ms = warmMs;
  await second.close();

  // 6. Uploaded passages are text, never HTML.
  const evil = path.join(outDir, 'evil.jsonl');
  fs.writeFileSync(evil, [
    { _id: 'x1', text: '<img src=x onerror="window.__xss=1;alert(1)"> bread baking at home' },
    { _id: 'x2', text: '<script>window.__xss=2;alert(2)</script> sourdough starter tips' },
    { _id: 'x3', title: '<b onmouseover=alert(3)>bold</b>', text: 'a plain passage about winter heating' },
  ].map((r) => JSON.stringify(r)).join('\n') + '\n');
  await page.getByTestId('corpus-upload').setInputFiles(evil);
  await page.waitForFunction(() => document.querySelectorAll(
    '[data-testid=ranking-query] [data-testid=result]').length === 3 &&
    document.querySelector('[data-testid=model-status]')?.textContent === 'ready', null, { timeout: 120_000 });
  const texts = await page.$$eval('[data-testid=ranking-query] [data-testid=result] .text', (els) => els.map((e) => e.textContent));
  const injected = await page.evaluate(() => ({
    xss: window.__xss ?? null,
    imgs: document.querySelectorAll('[data-testid=result] img').length,
    scripts: document.querySelectorAll('[data-testid=result] script').length,
    bold: document.querySelectorAll('[data-testid=result] b').length,
  }));
  check('payloads render as text', texts.some((t) => t.includes('<img src=x')) && texts.some((t) => t.includes('<script>')),
    JSON.stringify(texts));
  check('payloads run nothing', injected.xss === null && injected.imgs === 0 && injected.scripts === 0 &&
    injected.bold === 0 && dialogs === 0, JSON.stringify({ ...injected, dialogs }));
  await page.screenshot({ path: path.join(outDir, '04-upload.png'), fullPage: true });

  // 7. The embed example.
  const embed = await context.newPage();
  await embed.goto(new URL('public/embed.html', url).href);
  const frame = embed.frameLocator('iframe');
  await frame.getByTestId('model-status').filter({ hasText: 'ready' }).waitFor({ timeout: 300_000 });
  check('the demo works embedded in a docs page', true);
  await embed.screenshot({ path: path.join(outDir, '05-embed.png'), fullPage: true });

  // 8. The custom element: one module script, the state from its attributes.
  const element = await context.newPage();
  await element.goto(new URL('public/embed-element.html', url).href);
  const inner = element.frameLocator('ifir-demo iframe').first();
  await inner.getByTestId('model-status').filter({ hasText: 'ready' }).waitFor({ timeout: 300_000 });
  const query = await inner.getByTestId('query').inputValue();
  const instruction = await inner.getByTestId('instruction').inputValue();
  check('the <ifir-demo> element passes its attributes to the demo',
    query === 'how to keep a sourdough starter alive' && instruction === 'Only forum posts from home bakers',
    JSON.stringify({ query, instruction }));
  // The second element has the `train` attribute: its demo shows the learn-live panel.
  const trainFrame = element.locator('ifir-demo[train] iframe');
  await trainFrame.scrollIntoViewIfNeeded();
  const trainSrc = await trainFrame.getAttribute('src');
  await element.frameLocator('ifir-demo[train] iframe').getByTestId('learn-train').waitFor({ timeout: 300_000 });
  check('<ifir-demo train> shows the learn-live panel', /[?&]train=1/.test(trainSrc), trainSrc);
  await element.screenshot({ path: path.join(outDir, '06-element.png'), fullPage: true });

  // 9. The model picker: switch to the fine-tuned model; its ranking is the native engine's
  // ranking with that model.
  const tunedRef = JSON.parse(fs.readFileSync(path.join(outDir, 'native-finetuned.json'), 'utf8'));
  const sw = await context.newPage();
  await sw.goto(url);
  await waitReady(sw);
  await sw.getByTestId('model-select').selectOption('finetuned');
  await sw.waitForTimeout(500);
  await waitReady(sw);
  await sw.getByTestId('query').fill(tunedRef.case.query);
  await sw.getByTestId('instruction').fill(tunedRef.case.instruction);
  let tunedTop = [];
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    await sw.waitForTimeout(500);
    if ((await sw.getByTestId('model-status').textContent()) !== 'ready') continue;
    tunedTop = await top5(sw, 'instructed');
    if (closeTo(tunedTop, tunedRef.instructed, tunedRef.scores)) break;
  }
  const baseTop = native[0].top5.instructed;
  check('switching to the fine-tuned model ranks as the native engine with that model',
    closeTo(tunedTop, tunedRef.instructed, tunedRef.scores) && sw.url().includes('model=finetuned'),
    `browser ${JSON.stringify(tunedTop)} native ${JSON.stringify(tunedRef.instructed)} ` +
    `(base model: ${JSON.stringify(baseTop)}${same(baseTop, tunedRef.instructed) ? ', the same' : ', different'})`);
  await sw.screenshot({ path: path.join(outDir, '07-model-switch.png'), fullPage: true });

  // 10. Faults. A corrupt copy of the model file and of the passage embeddings in the Cache
  // API: downloaded and encoded again, no crash.
  const faulty = await context.newPage();
  await faulty.goto(url);
  await waitReady(faulty);
  const corrupted = await faulty.evaluate(async () => {
    const hit = { model: 0, embeddings: 0 };
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const request of await cache.keys()) {
        const kind = request.url.includes('/models/minilm/model.safetensors') ? 'model'
          : request.url.includes('embeddings/') ? 'embeddings' : null;
        if (kind) {
          await cache.put(request, new Response(new Uint8Array([7, 7, 7, 7])));
          hit[kind]++;
        }
      }
    }
    return hit;
  });
  await faulty.reload();
  await waitReady(faulty);
  const cacheNote = await faulty.getByTestId('cache-note').textContent();
  const corpusNote = await faulty.getByTestId('corpus-note').textContent();
  check('a corrupt cached model file and embeddings are fetched and encoded again',
    corrupted.model > 0 && corrupted.embeddings > 0 && /downloaded/.test(cacheNote) && /encoded/.test(corpusNote),
    `${JSON.stringify(corrupted)} entries corrupted; ${cacheNote}; ${corpusNote}`);
  await faulty.close();

  // A server whose model file does not match models/index.json: a clear message.
  const mismatched = await browser.newContext();
  await mismatched.route('**/models/index.json', async (route) => {
    const response = await route.fetch();
    const index = await response.json();
    for (const m of index.models) for (const f of m.files) {
      if (f.path === 'model.safetensors') f.sha256 = '0'.repeat(64);
    }
    await route.fulfill({ response, json: index });
  });
  const mp = await mismatched.newPage();
  await mp.goto(url);
  await mp.waitForFunction(() => document.querySelector('[data-testid=model-status]')?.textContent === 'error',
    null, { timeout: 300_000, polling: 250 });
  const mismatch = await mp.locator('[role=alert]').textContent();
  check('a model file whose sha256 differs from models/index.json is refused with a clear message',
    /checksum mismatch/.test(mismatch) && /does not match models\/index.json/.test(mismatch), mismatch);
  await mismatched.close();

  // Uploads of 20 MB and of binary junk: refused by name, the page stays usable.
  const big = path.join(outDir, 'big.txt');
  fs.writeFileSync(big, 'a passage about baking bread in a home oven, with notes on timing\n'.repeat(320_000));
  const junk = path.join(outDir, 'junk.bin');
  fs.writeFileSync(junk, Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 256)));
  const refusals = [];
  for (const [file, name] of [[big, 'big.txt'], [junk, 'junk.bin']]) {
    await page.getByTestId('corpus-upload').setInputFiles(file);
    await page.waitForFunction((n) => document.querySelector('[role=alert]')?.textContent.includes(n), name, { timeout: 120_000 });
    refusals.push(await page.locator('[role=alert]').textContent());
  }
  await page.getByTestId('query').fill('how to keep a sourdough starter alive');
  await page.waitForTimeout(1000);
  const usable = (await status()) === 'ready' && (await top5(page, 'query')).length > 0;
  check('a 20 MB upload and a binary file are refused with clear messages; the page stays usable',
    /big\.txt: 320000 passages; the page encodes at most/.test(refusals[0]) && /junk\.bin: a binary file/.test(refusals[1]) && usable,
    `${fs.statSync(big).size} bytes: ${refusals[0]} | ${refusals[1]} | usable: ${usable}`);
  fs.rmSync(big);

  // 11a. Learn live on the CPU: "Train" starts a Web Worker with its own wasm (not downloaded
  // before the press), which takes three steps from the served model; `trainer lesson` took the
  // same three natively (same files, seed and settings: native-lesson.json). Both compute in
  // f32 and differ only in the order of their sums (wasm SIMD on one thread against AVX-512 on
  // several): losses agree to about 1e-6 relative, so a tolerance of 1e-4 relative passes that
  // noise while a different batch, seed, loss or learning rate moves the loss by 1e-1. The
  // held-out scores are rank metrics over the same weights (1e-3 absolute allows a near-tie to
  // swap). The page's trained columns re-rank the whole demo topic; f32 against f32, ranks may
  // swap only within 1e-3 of the native score. WebGPU (below) runs its own kernels: 1e-3
  // relative on the losses, 0.02 on the held-out scores, 5e-3 on ties.
  const learnPage = await context.newPage();
  learnPage.on('console', (m) => logs.push(`[learn ${m.type()}] ${m.text()}`));
  learnPage.on('pageerror', (e) => logs.push(`[learn pageerror] ${e.message}`));
  const learnRequests = [];
  learnPage.on('request', (r) => { if (/learn/.test(r.url())) learnRequests.push(r.url()); });
  await learnPage.goto(lessonUrl(lessonRef, { backend: 'cpu' }));
  await waitReady(learnPage);
  const baseColumns = await columnsOf(learnPage);
  const beforePress = learnRequests.length;
  await learnLive(learnPage, 'CPU', lessonRef, { loss: 1e-4, held: 1e-3, tie: 1e-3 });
  check('learn live: the training wasm is downloaded only when Train is pressed',
    beforePress === 0 && learnRequests.some((u) => u.endsWith('learn_bg.wasm')), JSON.stringify(learnRequests));
  await learnPage.screenshot({ path: path.join(outDir, '09-learn-live.png'), fullPage: true });
  await learnPage.getByTestId('learn-reset').click();
  await learnPage.waitForFunction(() => document.querySelectorAll('[data-testid=learn-step]').length === 0);
  check('learn live: Reset brings back the page model\'s rankings', sameColumns(await columnsOf(learnPage), baseColumns));
  await learnPage.close();

  // 11. WebGPU on SwiftShader (a software adapter, so no GPU is needed), fresh browser cache:
  // the corpus is encoded on WebGPU too, not read from the CPU run's cache. One demo topic
  // (`corpus=TOPIC`): SwiftShader is a CPU rasteriser, so the whole corpus would take a quarter
  // of an hour; the native reference ranks the same passages.
  gpuBrowser = await chromium.launch({
    executablePath,
    args: [...baseArgs, '--enable-unsafe-webgpu', '--use-webgpu-adapter=swiftshader'],
  });
  const gpu = await (await gpuBrowser.newContext({ viewport: { width: 1500, height: 1100 } })).newPage();
  gpu.on('console', (m) => logs.push(`[webgpu ${m.type()}] ${m.text()}`));
  gpu.on('pageerror', (e) => logs.push(`[webgpu pageerror] ${e.message}`));
  const ref = JSON.parse(fs.readFileSync(path.join(outDir, 'native-topic.json'), 'utf8'));
  const params = new URLSearchParams({
    corpus: ref.corpus, q: ref.case.query, i: ref.case.instruction, r: ref.case.reversed,
  });
  const t2 = Date.now();
  await gpu.goto(`${url}?${params}`);
  await waitReady(gpu);
  summary.webgpu_ready_ms = Date.now() - t2;
  const backend = await gpu.getByTestId('backend').textContent();
  check('with a WebGPU adapter the page runs on WebGPU', backend === 'webgpu', backend);
  const columns = async (p) => ({
    query: await top5(p, 'query'), instructed: await top5(p, 'instructed'), reversed: await top5(p, 'reversed'),
  });
  const onGpu = await columns(gpu);
  const shown = await gpu.$$eval('[data-testid=ranking-query] [data-testid=result]', (els) => els.length);
  check(`the corpus=${ref.corpus} URL loads that demo topic`, shown === Math.min(ref.passages, 10), `${shown} results shown of ${ref.passages}`);
  check('WebGPU: top-5 of the three columns equal the native ranking', sameColumns(onGpu, ref.top5),
    `browser ${JSON.stringify(onGpu)} native ${JSON.stringify(ref.top5)}`);
  await gpu.screenshot({ path: path.join(outDir, '08-webgpu.png'), fullPage: true });
  // 11b. Learn live on WebGPU: the worker takes its own SwiftShader device. SwiftShader needs
  // about 25 s for one forward pass of four passages through the full model, so this check
  // trains the model's tiny cut (2 layers, 32 wide; xtask/src/tiny.rs) against `trainer lesson`
  // with the same cut.
  const gpuLearn = await gpu.context().newPage();
  gpuLearn.on('console', (m) => logs.push(`[webgpu learn ${m.type()}] ${m.text()}`));
  gpuLearn.on('pageerror', (e) => logs.push(`[webgpu learn pageerror] ${e.message}`));
  await gpuLearn.goto(lessonUrl(lessonTinyRef, { model: 'tiny' }));
  await waitReady(gpuLearn);
  check('learn live (WebGPU): the page trains on WebGPU', await gpuLearn.getByTestId('backend').textContent() === 'webgpu');
  await learnLive(gpuLearn, 'WebGPU', lessonTinyRef, { loss: 1e-3, held: 0.02, tie: 5e-3 });
  await gpuLearn.screenshot({ path: path.join(outDir, '10-learn-live-webgpu.png'), fullPage: true });
  await gpuLearn.close();
  await gpu.getByLabel('Backend').selectOption('cpu');
  await gpu.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent === 'cpu');
  await gpu.waitForTimeout(500);
  await waitReady(gpu);
  const onCpu = await columns(gpu);
  check('switching WebGPU -> CPU: backend shown, rankings of the native engine in int8', closeColumns(onCpu, ref.top5_cpu, ref.scores_cpu) && gpu.url().includes('backend=cpu'),
    `cpu ${JSON.stringify(onCpu)} url ${gpu.url()}`);

  // A WebGPU adapter that is granted but whose device cannot be created: the page falls back to
  // the CPU and says so.
  const failing = await gpuBrowser.newContext({ viewport: { width: 1500, height: 1100 } });
  await failing.addInitScript(() => {
    if (globalThis.GPUAdapter) {
      GPUAdapter.prototype.requestDevice = () => Promise.reject(new Error('device lost (test)'));
    }
  });
  const fp = await failing.newPage();
  await fp.goto(`${url}?${params}`);
  await waitReady(fp);
  const fallback = await fp.getByTestId('backend').textContent();
  const fallbackNote = await fp.locator('[role=alert]').textContent().catch(() => '');
  check('a WebGPU device that fails falls back to the CPU with a visible note',
    fallback === 'cpu' && /WebGPU is not usable here/.test(fallbackNote) && (await top5(fp, 'query')).length > 0,
    `${fallback}: ${fallbackNote}`);
  await failing.close();

  // A WebGPU device lost mid-way: granted, used for the warm-up, then destroyed while the corpus
  // encodes (as a driver reset or a GPU process crash does). The page switches to the CPU, says
  // so, encodes again and ranks as the native engine; nothing panics.
  const losing = await gpuBrowser.newContext({ viewport: { width: 1500, height: 1100 } });
  await losing.addInitScript(() => {
    globalThis.__devices = [];
    if (globalThis.GPUAdapter) {
      const request = GPUAdapter.prototype.requestDevice;
      GPUAdapter.prototype.requestDevice = async function (...args) {
        const device = await request.apply(this, args);
        globalThis.__devices.push(device);
        return device;
      };
    }
  });
  const lp = await losing.newPage();
  const lostLogs = [];
  lp.on('console', (m) => lostLogs.push(`[${m.type()}] ${m.text()}`));
  lp.on('pageerror', (e) => lostLogs.push(`[pageerror] ${e.message}`));
  await lp.goto(`${url}?${params}`);
  await lp.waitForFunction(() => document.querySelector('[data-testid=backend]')?.textContent === 'webgpu'
    && /^encoding corpus/.test(document.querySelector('[data-testid=model-status]')?.textContent ?? ''),
  null, { timeout: 600_000, polling: 20 });
  const destroyed = await lp.evaluate(() => {
    for (const d of globalThis.__devices) d.destroy();
    return { devices: globalThis.__devices.length, status: document.querySelector('[data-testid=model-status]')?.textContent };
  });
  await waitReady(lp);
  const lostBackend = await lp.getByTestId('backend').textContent();
  const lostNote = await lp.locator('[role=alert]').textContent().catch(() => '');
  const afterLoss = await columns(lp);
  const gpuOption = await lp.locator('select[aria-label=Backend] option[value=webgpu]').isDisabled();
  const panics = lostLogs.filter((l) => /panicked|pageerror|RuntimeError|unreachable/.test(l));
  logs.push(...lostLogs.map((l) => `[webgpu lost] ${l}`));
  check('a WebGPU device lost mid-way falls back to the CPU with a note and ranks as the native engine',
    destroyed.devices > 0 && lostBackend === 'cpu' && /WebGPU failed mid-way/.test(lostNote)
      && closeColumns(afterLoss, ref.top5_cpu, ref.scores_cpu) && gpuOption && panics.length === 0,
    `${destroyed.devices} device(s) destroyed at "${destroyed.status}"; ${lostBackend}: ${lostNote}; WebGPU option disabled: ${gpuOption}; ${panics.join(' | ')}`);
  await losing.close();
} catch (e) {
  check('no exception', false, String(e));
  await page.screenshot({ path: path.join(outDir, 'failure.png'), fullPage: true }).catch(() => {});
} finally {
  fs.writeFileSync(path.join(outDir, 'console.log'), logs.join('\n'));
  const grab = (re) => logs.map((l) => l.match(re)).filter(Boolean).map((m) => Number(m[1]));
  summary.corpus_encode_ms = grab(/^\[log\] corpus of \d+ passages encoded in (\d+) ms/);
  summary.query_ms = grab(/^\[log\] query encoded and ranked in ([\d.]+) ms/);
  summary.webgpu_corpus_encode_ms = grab(/^\[webgpu log\] corpus of \d+ passages encoded in (\d+) ms/);
  summary.webgpu_query_ms = grab(/^\[webgpu log\] query encoded and ranked in ([\d.]+) ms/);
  summary.console_errors = logs.filter((l) => l.startsWith('[error]') || l.startsWith('[pageerror]'));
  fs.writeFileSync(path.join(outDir, 'summary.json'), JSON.stringify(summary, null, 2));
  await browser.close();
  if (gpuBrowser) await gpuBrowser.close();
}
console.log(failures ? `${failures} check(s) failed` : 'all browser checks passed');
process.exit(failures ? 1 : 0);

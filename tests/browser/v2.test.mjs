#!/usr/bin/env node
// Browser test of the flame graph page reading tree JSON version 2 (docs/profile-json.md, issue 18).
//
//   node v2.test.mjs [V1PAGE.html V2PAGE.html ...] [--hostile BASE.v2.json] [--open V2.json] [--deep N]
//                    [--perf PAGE.html] [--out DIR] [--label NAME]
//
// Pairs: the same capture's page from its version-1 JSON and from its version-2 JSON
// (v1_to_v2.py, or the C writer): the page's ingested tree JSON (tbView.source(): tree, meta,
// threads, timeline, tasks) must be the same, key order included, and so must what it shows:
// the laid-out blocks (name, depth, x, width) and the sidebar's text, for all threads, each of
// the 3 busiest threads, zoomed into the widest frame, inverted, with native/kernel frames hidden
// and a timeline range (when the capture has them).
// --hostile: pages (in --out) of BASE with one column broken at a time: each must show the page's
// error with one line "Not a valid tree JSON version 2: ...", nothing else going wrong.
// --synthetic: version-1 JSONs not from the C writer (gen_profile.py): compared with keys sorted,
// without what version 2 does not carry (filename, lineno, location, lines of root, process and
// marker nodes).
// --open: the bare template (no data) opens a version-2 JSON file through its file picker.
// --deep N: a chain N frames deep must load and show its leaf. --perf: the page's load steps
// (tbView.timings), first render, a zoom and a thread switch, each against 1 s
// (TB_V2_BUDGET_MS), printed as "# v2 perf" lines; over budget on a busy machine is reported, not failed.
// Runs through harness.mjs; the last line is "N passed, N failed".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { check, ev, parseArgs, runPageTest, setLabel, totalShown } from './harness.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const TEMPLATE = path.join(here, '..', '..', 'user', 'output', 'assets', 'flamegraph.html');
const { flags, pos } = parseArgs(process.argv.slice(2), {
  '--synthetic': 'bool', '--hostile': 'value', '--open': 'value', '--deep': 'number', '--perf': 'value', '--out': 'value', '--label': 'value',
}, 0, 'node v2.test.mjs [V1PAGE.html V2PAGE.html ...] [--hostile BASE.v2.json] [--open V2.json] [--deep N] [--perf PAGE.html] [--out DIR] [--label NAME]');
const out = flags.out || path.join(here, 'out', 'v2');
fs.mkdirSync(out, { recursive: true });
const BUDGET_MS = Number(process.env.TB_V2_BUDGET_MS || 1000);

/** A page as page.c writes it: the JSON deflated (zlib), base64, in place of @@TB_DATA@@. */
function writePage(file, json, title) {
  const tpl = fs.readFileSync(TEMPLATE, 'utf8');
  const data = zlib.deflateSync(Buffer.from(typeof json === 'string' ? json : JSON.stringify(json)), { level: 6 }).toString('base64');
  fs.writeFileSync(file, tpl.replace('@@TB_TITLE@@', title).replace('@@TB_DATA@@', () => data));
  return file;
}

/** What the page shows now: totals, blocks and the sidebar's text. */
const shown = (page) => ev(page, () => ({ total: tbView.totalShown(), blocks: tbView.blocks(), side: document.getElementById('sidebar').innerText,
  matched: tbView.matched(), panel: document.getElementById('ip-body').textContent, crumbs: document.getElementById('crumbs').textContent }));
/** The first difference of two JSON-able values as text, or ''. */
function diffText(a, b) {
  const x = JSON.stringify(a), y = JSON.stringify(b);
  if (x === y) return '';
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  return `at ${i}: v1 …${x.slice(Math.max(0, i - 60), i + 60)}… v2 …${y.slice(Math.max(0, i - 60), i + 60)}…`;
}

async function comparePair(B, p1, p2) {
  const name = path.basename(p2, '.html');
  const a = await B.open(p1), b = await B.open(p2);
  const ready = await ev(b, () => document.body.dataset.ready);
  if (!check(`${name}: the v2 page loads`, ready === '1', ready === '1' ? undefined : await ev(b, () => document.getElementById('error').textContent))) return;
  const src = (page) => ev(page, (sorted) => {
    const d = tbView.source(), o = {};
    for (const k of ['tree', 'meta', 'threads', 'timeline', 'tasks']) if (k in d) o[k] = d[k];
    return JSON.stringify(o, (k, v) => (k === '_k' ? undefined    // _k: the timeline's mark
      : sorted && v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort()
        .filter((x) => !(['root', 'process', 'truncated', 'partial'].includes(v.kind) && ['filename', 'lineno', 'location', 'lines'].includes(x))).map((x) => [x, v[x]])) : v));
  }, flags.synthetic);
  const s1 = await src(a), s2 = await src(b);
  check(`${name}: v2 gives exactly the v1 tree JSON objects (keys${flags.synthetic ? '' : ' in order'}, values, list orders)`, s1 === s2, s1 === s2 ? `${s1.length} bytes of JSON` : diffText(JSON.parse(s1), JSON.parse(s2)));
  const same = async (what, act) => {
    if (act) { await ev(a, act.fn, act.arg); await ev(b, act.fn, act.arg); }
    const x = await shown(a), y = await shown(b), d = diffText(x, y);
    check(`${name}: ${what}: the same blocks, widths and sidebar`, !d && (x.blocks.length > 0 || !x.total), d || `${x.blocks.length} blocks, ${x.total} samples`);
  };
  await same('all threads');
  const tids = await ev(a, () => Object.entries(tbView.source().threads || {}).sort((x, y) => y[1].python_samples - x[1].python_samples).slice(0, 3).map(([t]) => t));
  for (const t of tids) await same(`thread ${t}`, { fn: (x) => tbView.selectThread(x), arg: t });
  await ev(a, () => tbView.selectThread(null)); await ev(b, () => tbView.selectThread(null));
  const pid = await ev(a, () => { const p = (tbView.source().meta || {}).processes; return Array.isArray(p) && p.length ? p[p.length - 1].pid : null; });
  if (pid != null) {
    await same(`process ${pid}`, { fn: (x) => tbView.selectProcess(x), arg: pid });
    await same('all processes', { fn: () => tbView.selectProcess(null) });
  }
  const task = await ev(a, () => (tbView.tasks()[0] || {}).name);
  if (task != null) {
    await same('a task', { fn: (x) => tbView.selectTask(x), arg: task });
    await same('all tasks', { fn: () => tbView.selectTask(null) });
  }
  const widest = await ev(a, () => { let best = null; for (const [n, d, , w] of tbView.blocks()) if (d >= 2 && n && (!best || w > best[1])) best = [n, w]; return best && best[0]; });
  if (widest) {
    await same(`zoomed into ${JSON.stringify(widest).slice(0, 40)}`, { fn: (q) => tbView.zoomTo(q), arg: widest });
    await same('zoom reset', { fn: () => tbView.zoomTo(null) });
  }
  if (widest) {
    await same(`a search for ${JSON.stringify(widest.slice(0, 3))}`, { fn: (q) => tbView.search(q), arg: widest.slice(0, 3) });
    await same('a regex search', { fn: () => tbView.search('/^[a-m_]/') });
    await same('no search', { fn: () => tbView.search('') });
  }
  await same('inverted', { fn: () => tbView.toggleInvert() });
  await same('inverted back', { fn: () => tbView.toggleInvert() });
  const kinds = await ev(a, () => tbView.state().kinds);
  if (kinds.native || kinds.kernel) {
    await same('native and kernel frames hidden', { fn: () => tbView.hideKinds(true, true) });
    await same('shown again', { fn: () => tbView.hideKinds(false, false) });
  }
  if (widest) await same(`${JSON.stringify(widest).slice(0, 40)} selected`, { fn: (q) => tbView.select(q), arg: widest });
  const tl = await ev(a, () => tbView.timeline());
  if (tl) {
    const span = tl.buckets * tl.bucket_s;
    await same('a timeline range', { fn: ([x, y]) => tbView.timeRange(x, y), arg: [span * 0.25, span * 0.75] });
    await same('the whole timeline', { fn: () => tbView.timeRange(null) });
  }
  await a.close(); await b.close();
}

/** One column of base broken per case: [what, mutate(v2)]. */
const CASES = [
  ['no nodes object', (d) => { delete d.nodes; }],
  ['count 0', (d) => { d.nodes.count = 0; }],
  ['count larger than the columns', (d) => { d.nodes.count += 1; }],
  ['count 1e9', (d) => { d.nodes.count = 1e9; }],
  ['parent[0] is not 0', (d) => { d.nodes.parent[0] = 1; }],
  ['a parent step past the root', (d) => { d.nodes.parent[1] = 2; }],
  ['a parent step of 0', (d) => { d.nodes.parent[d.nodes.count - 1] = 0; }],
  ['a negative parent step', (d) => { d.nodes.parent[1] = -1; }],
  ['a fractional value', (d) => { d.nodes.value[0] = 1.5; }],
  ['a negative self', (d) => { d.nodes.self[0] = -3; }],
  ['a string as a value', (d) => { d.nodes.value[0] = '7'; }],
  ['a frame index past the table', (d) => { d.nodes.frame[1] = d.frames.length / 3; }],
  ['a thread index past threads_order', (d) => { d.nodes.thread[0] = d.threads_order.length; }],
  ['a thread of -2', (d) => { d.nodes.thread[0] = -2; }],
  ['a thread -1 without thread_values', (d) => { const i = d.nodes.thread.indexOf(0); d.nodes.thread[i] = -1; d.nodes.thread_values = []; }],
  ['thread_values for a node with a thread', (d) => { d.nodes.thread[0] = 0; d.nodes.thread_values = [0, 0]; }],
  ['a function index past the table', (d) => { d.frames[0] = d.functions.length / 4; }],
  ['a location index past the table', (d) => { d.frames[2] = d.locations.length / 4; }],
  ['a kind index past the table', (d) => { d.functions[0] = d.kinds.length; }],
  ['a name index past the strings', (d) => { d.functions[1] = d.strings.length; }],
  ['a filename index of -1', (d) => { d.functions[2] = -1; }],
  ['a table length not a multiple of its tuple', (d) => { d.functions.push(0); }],
  ['a number in the strings', (d) => { d.strings.push(5); }],
  ['strings not a list', (d) => { d.strings = { 0: '' }; }],
  ['a sparse step of 0', (d) => { d.nodes.lines = [1, 0, 0, 0]; }],
  ['a sparse count past the end', (d) => { d.nodes.lines = [1, 1000000, 1, 2, 3]; }],
  ['a sparse count of 2^31', (d) => { d.nodes.opcodes = [1, 2147483648, 0, 0, 0]; }],
  ['a sparse entry past the last node', (d) => { d.nodes.lines = [d.nodes.count, 0]; }],
  ['a sparse entry cut short', (d) => { d.nodes.thread_opcodes = [1, 1, 0]; }],
  ['lines for the root', (d) => { d.nodes.lines = [0, 0]; }],
  ['an opcode name past the strings', (d) => { d.nodes.opcodes = [2, 1, d.strings.length, 0, 1]; }],
  ['an instruction name of -2', (d) => { d.nodes.instructions = [2, 1, 0, -2, -1, 1, 1, 0, 0, 1]; }],
  ['out of depth-first order', (d) => { d.nodes.count = 5; d.nodes.parent = [0, 1, 1, 3, 3]; d.nodes.frame = [0, 0, 0, 0, 0]; d.nodes.value = [1, 1, 1, 1, 1]; d.nodes.self = [1, 1, 1, 1, 1]; d.nodes.thread = [-1, -1, -1, -1, -1]; d.nodes.thread_values = [0, 0, 1, 0, 1, 0, 1, 0, 1, 0]; for (const k of ['lines', 'opcodes', 'thread_opcodes', 'instructions']) d.nodes[k] = []; }],
];

async function hostile(B, base) {
  const d0 = JSON.parse(fs.readFileSync(base, 'utf8'));
  for (const [what, mut] of CASES) {
    const d = structuredClone(d0);
    mut(d);
    const file = writePage(path.join(out, 'hostile-' + what.replace(/\W+/g, '-') + '.html'), d, 'hostile v2');
    const page = await B.open(file, { timeout: 20000, lenient: true });
    const r = await ev(page, () => ({ ready: document.body.dataset.ready, msg: document.getElementById('error').textContent, graph: !document.getElementById('graph').hidden }));
    check(`hostile: ${what}: refused with one line`, r.ready === 'error' && !r.graph && /^Not a valid tree JSON version 2: [^\n]+\.$/.test(r.msg), JSON.stringify(r.msg).slice(0, 160));
    await page.close();
  }
}

/** The bare template's file picker given a version-2 JSON: the same total as its root's value. */
async function openFile(B, file) {
  const d = JSON.parse(fs.readFileSync(file, 'utf8')), page = await B.open(TEMPLATE, { lenient: true });
  await page.setInputFiles('#error input[type=file]', file);
  await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30000 }).catch(() => {});
  const r = await ev(page, () => ({ ready: document.body.dataset.ready, total: document.body.dataset.ready === '1' ? tbView.totalShown() : null }));
  check('the bare template opens a version-2 JSON file', r.ready === '1' && r.total === d.nodes.value[0], JSON.stringify(r));
  await page.close();
}

/** A chain of n frames below the process, as version 2: one function per depth (name fN). */
function deepChain(n) {
  const strings = ['', 'all', 'python3 (pid 7)', '/tmp/deep.py'], functions = [0, 1, 0, 0, 1, 2, 0, 7], frames = [0, 0, 0, 1, 7, 0];
  for (let i = 0; i < n; i++) { strings.push('f' + i); functions.push(2, strings.length - 1, 3, i + 1); frames.push(i + 2, i + 1, 0); }
  const N = n + 2, ones = (x) => new Array(N).fill(x);
  const value = ones(1000);
  return {
    format: 'tachyon-bpf-tree', version: 2,
    meta: { rate_hz: 99, duration_s: 1, python_samples: 1000, samples: 1000, by_line: false, processes: [{ pid: 7, comm: 'python3', samples: 1000 }] },
    threads: { 7: { pid: 7, name: 'MainThread', samples: 1000, python_samples: 1000, status: { on_cpu: 1000 } } },
    strings, kinds: ['root', 'process', 'frame'], functions, locations: [-1, -1, -1, -1], frames, threads_order: ['7'],
    nodes: { count: N, parent: [0, ...new Array(N - 1).fill(1)], frame: [...Array(N).keys()], value, self: value.map((_, i) => (i === N - 1 ? 1000 : 0)), thread: ones(0),
      thread_values: [], lines: [], opcodes: [], thread_opcodes: [], instructions: [] },
  };
}

async function deep(B, n) {
  const file = writePage(path.join(out, `deep-${n}.html`), deepChain(n), 'deep chain');
  const page = await B.open(file, { timeout: 120000, lenient: true });
  const r = await ev(page, () => ({ ready: document.body.dataset.ready, err: document.getElementById('error').textContent, total: tbView.totalShown() }));
  check(`a chain ${n} frames deep loads`, r.ready === '1', r.ready === '1' ? `${r.total} samples` : r.err);
  if (r.ready === '1') {
    const leaf = await ev(page, () => { const b = tbView.blocks(), x = b[b.length - 1]; return [x[0], x[1], b.length]; });
    check(`its leaf f${n - 1} is laid out at depth ${n + 1}`, leaf[0] === 'f' + (n - 1) && leaf[1] === n + 1 && leaf[2] === n + 2, JSON.stringify(leaf));
    // zooming to the leaf: the breadcrumb shows the first levels, a count of the hidden ones and the last ones
    const z = await ev(page, (name) => {
      const t0 = performance.now(), ok = tbView.zoomTo(name), b = [...document.querySelectorAll('#crumbs button')].map((x) => x.textContent);
      return { ok, ms: Math.round(performance.now() - t0), buttons: b.length, first: b[0], last: b[b.length - 1], hidden: document.getElementById('crumbs').textContent.match(/[\d,]+ levels/)?.[0] };
    }, 'f' + (n - 1));
    check(`zooming to its leaf: ${z.buttons} breadcrumb buttons, ${z.hidden} not shown (${z.ms} ms)`, z.ok && z.first === 'all' && z.last === 'f' + (n - 1) && z.buttons <= 30 && !!z.hidden && z.ms < 10000, JSON.stringify(z));
  }
  await page.close();
}

async function perf(B, file) {
  const size = fs.statSync(file).size, load = os.loadavg()[0], ncpu = os.cpus().length, busy = load > ncpu;
  const budget = (what, ms) => check(`${what} within ${BUDGET_MS} ms`, ms <= BUDGET_MS || busy, `${ms.toFixed(0)} ms${ms > BUDGET_MS && busy ? ` — over, not failed: load ${load.toFixed(1)} on ${ncpu} CPUs` : ''}`);
  const page = await B.open(file, { timeout: 300000 });
  const t = await ev(page, () => { const t = tbView.timings, o = {}; for (const k in t) o[k] = Math.round(t[k]); return o; });
  console.log("# timings " + JSON.stringify(t));
  // (a big tree's page draws its preview first: firstRender; the data replaces it at fullRender)
  const steps = { base64: t.base64 - Math.max(t.script, t.firstRender), inflate: t.inflate - t.base64, parse: t.parsed - t.inflate, ingest: t.ingest, render: t.fullRender - t.parsed - t.ingest };
  console.log(`# v2 perf: page ${(size / 1e6).toFixed(1)} MB; ${Object.entries(steps).map(([k, v]) => `${k} ${v} ms`).join(', ')}; first render at ${t.firstRender} ms, the whole profile at ${t.fullRender} ms`);
  budget('first render (from the script start)', t.firstRender - t.script);
  const timeIt = (fn, arg) => ev(page, ([f, a]) => { const t0 = performance.now(); (0, eval)(f)(a); return performance.now() - t0; }, [fn.toString(), arg]);
  const widest = await ev(page, () => { let best = null; for (const [n, d, , w] of tbView.blocks()) if (d >= 3 && n && (!best || w > best[1])) best = [n, w]; return best && best[0]; });
  const tid = await ev(page, () => Object.keys(tbView.source().threads || {})[0]);
  const ops = { 'zoom in': await timeIt((q) => tbView.zoomTo(q), widest), 'zoom reset': await timeIt(() => tbView.zoomTo(null)),
    'thread switch': await timeIt((x) => tbView.selectThread(x), tid), 'all threads': await timeIt(() => tbView.selectThread(null)) };
  console.log('# v2 perf: ' + Object.entries(ops).map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', '));
  for (const [k, v] of Object.entries(ops)) budget(k, v);
  check('the page is at most 8 MB', size <= 8e6, `${(size / 1e6).toFixed(2)} MB`);
  await page.close();
}

setLabel(flags.label || 'v2');
if (pos.length % 2) { check('pages come in pairs (v1, v2)', false, pos.join(' ')); }
await runPageTest({ viewport: { width: 1400, height: 900 } }, null, async (B) => {
  for (let i = 0; i + 1 < pos.length; i += 2) await comparePair(B, pos[i], pos[i + 1]);
  if (flags.hostile) await hostile(B, flags.hostile);
  if (flags.open) await openFile(B, flags.open);
  if (flags.deep) await deep(B, flags.deep);
  if (flags.perf) await perf(B, flags.perf);
});

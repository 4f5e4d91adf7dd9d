// harness.mjs: what every page test shares: option parsing, the ok/FAIL lines and the closing
// "N passed, N failed" line, Debian's chromium launched headless through playwright-core with
// the flags of tests/lib/browser-env.sh, page loading, the guards (network requests other than
// the opened file:// pages, data: and blob:, console errors, page errors, dialogs), screenshots
// and downloads. One test per process: the counters are this module's.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const here = path.dirname(new URL(import.meta.url).pathname);
const repo = path.resolve(here, '..', '..');
export const J = (v) => JSON.stringify(v);

// ------------------------------------------------------------------ reporting
let passed = 0, failed = 0, label = '';
export function setLabel(l) { label = l; }
export function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   - [${label}] ${name}${detail !== undefined ? ' (' + detail + ')' : ''}`); }
  else { failed++; console.log(`FAIL - [${label}] ${name}${detail !== undefined ? ': ' + detail : ''}`); }
  return ok;
}
/** The closing line; exits non-zero on any failure or when nothing was checked. */
export function finish(code) {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code !== undefined ? code : failed || !passed ? 1 : 0);
}

/** argv -> { flags, pos }. spec: option -> 'bool' | 'value' | 'number' | 'list'; a flag is
 *  named by its option without the dashes, camel-cased (--thread-of: threadOf). Positionals
 *  named in need are required: without them, usage goes to stderr and the test fails. */
export function parseArgs(argv, spec, need, usage) {
  const key = (o) => o.replace(/^--/, '').replace(/-(\w)/g, (_, c) => c.toUpperCase());
  const flags = {};
  for (const [o, kind] of Object.entries(spec)) flags[key(o)] = kind === 'bool' ? false : kind === 'list' ? [] : null;
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    const kind = spec[argv[i]], k = key(argv[i]);
    if (kind === undefined) pos.push(argv[i]);
    else if (kind === 'bool') flags[k] = true;
    else if (kind === 'list') flags[k].push(argv[++i]);
    else flags[k] = kind === 'number' ? Number(argv[++i]) : argv[++i];
  }
  if (pos.length < need) {
    console.error('usage: ' + usage);
    console.log('0 passed, 1 failed');
    process.exit(2);
  }
  return { flags, pos };
}

// ------------------------------------------------------------------ the browser
/** Chromium's flags: TB_CHROMIUM_FLAGS (set by browser_env), else as tests/lib/browser-env.sh defines it. */
function chromiumFlags() {
  let s = process.env.TB_CHROMIUM_FLAGS;
  if (s === undefined) {
    const env = fs.readFileSync(path.join(repo, 'tests', 'lib', 'browser-env.sh'), 'utf8');
    s = (env.match(/^TB_CHROMIUM_FLAGS="([^"]*)"/m) || [])[1] || '';
  }
  return s.split(/\s+/).filter(Boolean);
}

/**
 * Launches chromium (a fresh profile, downloads accepted) with the given context options
 * (viewport, colorScheme, deviceScaleFactor) and watches it. Returns
 *   { ctx, open(file|url, { page, timeout }), watch(page), shot(page, name), download(page, selector, file), guards(), close() }.
 * A failed launch is a failed check and ends the test.
 */
export async function launch(options, shotsDir) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-chromium-'));
  const shots = shotsDir || path.join(here, 'artifacts');
  fs.mkdirSync(shots, { recursive: true });
  const exe = process.env.CHROMIUM || '/usr/bin/chromium';
  let ctx;
  try {
    ctx = await chromium.launchPersistentContext(userDataDir, { executablePath: exe, headless: true, acceptDownloads: true, args: chromiumFlags(), ...options });
  } catch (e) {
    check(`launch ${exe}`, false, String(e.message).split('\n')[0]);
    finish();
  }
  const opened = new Set(), requests = [], consoleErrors = [], pageErrors = [], dialogs = [];
  const noHash = (u) => u.split('#')[0];
  ctx.on('request', (r) => requests.push(r.url()));
  const watched = new WeakSet();
  /** Record the console errors, page errors and dialogs (dismissed) of a page. */
  function watch(page) {
    if (watched.has(page)) return page;
    watched.add(page);
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => pageErrors.push(String(e && e.message ? e.message : e)));
    page.on('dialog', (d) => { dialogs.push(d.type() + ': ' + d.message()); d.dismiss().catch(() => {}); });
    return page;
  }
  let spare = ctx.pages()[0];   // the blank page a persistent context starts with
  /** Load a file (or file:// URL) in page (default: a new one) and wait until the page says it
   *  is ready (body data-ready set and not "0") for timeout ms; lenient: a timeout is no error. */
  async function open(target, { page, timeout = 60000, lenient = false } = {}) {
    const url = target.startsWith('file:') ? target : pathToFileURL(path.resolve(target)).href;
    page = watch(page || spare || (await ctx.newPage()));
    spare = null;
    opened.add(noHash(url));
    await page.goto(url);
    const ready = page.waitForFunction(() => document.body && document.body.dataset.ready && document.body.dataset.ready !== '0' && document.body.dataset.ready !== 'preview', null, { timeout });
    if (lenient) await ready.catch(() => {}); else await ready;
    return page;
  }
  const shot = (page, name) => page.screenshot({ path: path.join(shots, `${name}.png`) });
  /** Click selector, save the download as file in the screenshots folder; its text. */
  async function download(page, selector, file) {
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15000 }), page.click(selector)]);
    const p = path.join(shots, file);
    await dl.saveAs(p);
    return fs.readFileSync(p, 'utf8');
  }
  /** The checks every page test ends with. */
  function guards() {
    const foreign = requests.filter((u) => !opened.has(noHash(u)) && !u.startsWith('data:') && !u.startsWith('blob:'));
    check('no network requests besides the file:// pages, data: and blob:', foreign.length === 0, foreign.slice(0, 5).join(' ') || `${requests.length} requests, all local`);
    check('no console errors', consoleErrors.length === 0, consoleErrors.slice(0, 3).join(' | ') || undefined);
    check('no page errors', pageErrors.length === 0, pageErrors.slice(0, 3).join(' | ') || undefined);
    check('no dialogs opened', dialogs.length === 0, dialogs.slice(0, 3).join(' | ') || undefined);
  }
  async function close() {
    await ctx.close().catch(() => {});
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
  return { ctx, userDataDir, shots, open, watch, shot, download, guards, close };
}

/** Launch, run body(browser), then the guards, close and the closing line. An exception in
 *  body is a failed check. */
export async function runPageTest(options, shotsDir, body) {
  const b = await launch(options, shotsDir);
  try {
    await body(b);
  } catch (e) {
    check('test ran to completion', false, (e && e.stack ? e.stack : String(e)).split('\n').slice(0, 4).join(' / '));
  }
  b.guards();
  await b.close();
  finish();
}

// ------------------------------------------------------------------ data and page helpers
/** Depth-first walk of a JSON tree: fn(node, depth, parent). */
export function walk(n, fn, d = 0, p = null) { fn(n, d, p); for (const c of n.children || []) walk(c, fn, d + 1, n); }
export const ev = (page, fn, arg) => page.evaluate(fn, arg);
/** The flame graph page's displayed total (#total-samples data-value). */
export const totalShown = async (page) => Number(await page.getAttribute('#total-samples', 'data-value'));

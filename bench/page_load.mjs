#!/usr/bin/env node
// bench/page_load.mjs: how fast a flame graph page opens in headless Chromium (issue 18), for
// bench/big.sh: the medians over RUNS loads (after one warm-up) of the times from the navigation's
// start to the script's start, to the first render (a big tree's preview), and to the whole
// profile shown; then on the whole profile a zoom into the widest frame below depth 2, a zoom
// out and a thread switch. Debian's chromium through tests/browser's playwright-core
// (tests/lib/browser-env.sh installs both).
//
//   node bench/page_load.mjs PAGE.html [RUNS]      (default 5)
//
// Prints one line: "script S first F whole W zoom Z unzoom U thread T" (ms), or "- ..." on a timeout.
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

const here = path.dirname(new URL(import.meta.url).pathname);
const { chromium } = await import(path.join(here, '..', 'tests', 'browser', 'node_modules', 'playwright-core', 'index.mjs'));
const [file, runsArg] = process.argv.slice(2);
if (!file) { console.error('usage: node bench/page_load.mjs PAGE.html [RUNS]'); process.exit(2); }
const runs = Math.max(1, Number(runsArg) || 5), url = pathToFileURL(path.resolve(file)).href;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tb-page-load-'));
const ctx = await chromium.launchPersistentContext(dir, { executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--disable-gpu'], viewport: { width: 1400, height: 900 } });
const median = (a) => { const s = a.slice().sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const rows = { script: [], first: [], whole: [], zoom: [], unzoom: [], thread: [] };
try {
  for (let r = 0; r <= runs; r++) {
    const page = await ctx.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForFunction(() => document.body && (document.body.dataset.ready === '1' || document.body.dataset.ready === 'error'), null, { timeout: 300000, polling: 20 });
    const t = await page.evaluate(() => {
      const time = (f) => { const t0 = performance.now(); f(); return performance.now() - t0; };
      let best = null;
      for (const [n, d, , w] of tbView.blocks()) if (d >= 2 && n && (!best || w > best[1])) best = [n, w];
      const tid = Object.keys(tbView.source().threads || {})[0];
      const x = tbView.timings;
      return { script: x.script, first: x.firstRender, whole: x.fullRender, zoom: time(() => tbView.zoomTo(best && best[0])), unzoom: time(() => tbView.zoomTo(null)),
        thread: time(() => tbView.selectThread(tid)) };
    });
    if (r) for (const k in rows) rows[k].push(t[k]);   // run 0 warms the caches
    await page.close();
  }
  console.log(Object.keys(rows).map((k) => `${k} ${Math.round(median(rows[k]))}`).join(' '));
} catch (e) {
  console.log('- ' + String(e.message).split('\n')[0]);
} finally {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

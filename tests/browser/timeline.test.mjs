#!/usr/bin/env node
// Browser test of the timeline strip of the flame graph page on a capture of
// tests/workloads/phases.py (phase_one for 2 s, then phase_two): the strip is shown; brushing each
// phase's range (through the page's API, in seconds since the start) shows exactly what
// `tachyon-bpf render --from --to -o x.json` wrote for that range (total and the phase's
// samples), at least 95% that phase's function, in the graph, the sidebar total, the hotspots
// and the thread list; a mouse drag over the strip inside phase one does the same; hovering a
// frame highlights when it ran; the arrow keys move the range; Esc and "Whole capture" reset;
// "Per process" stacks the strip per process.
//
//   node timeline.test.mjs PAGE.html WHOLE.json ONE.json TWO.json --one A,B --two C,D [--label NAME]
//
// ONE.json / TWO.json: the tree JSON of each phase's slice, A,B / C,D: its bounds in seconds since
// the capture's start. The last line printed is "N passed, N failed".
import fs from 'node:fs';
import path from 'node:path';
import { check, ev, parseArgs, runPageTest, setLabel, totalShown, walk } from './harness.mjs';

const { flags, pos } = parseArgs(process.argv.slice(2), { '--one': 'value', '--two': 'value', '--label': 'value' }, 4,
  'node timeline.test.mjs PAGE.html WHOLE.json ONE.json TWO.json --one A,B --two C,D [--label NAME]');
const [pagePath, wholePath, onePath, twoPath] = pos;
setLabel(flags.label || path.basename(pagePath, '.html'));
const load = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const whole = load(wholePath);
const valueOf = (tree, name) => { let v = 0; walk(tree, (n) => { if (n.kind === 'frame' && n.name === name) v += n.value; }); return v; };
const phases = [
  { name: 'phase_one', json: load(onePath), span: flags.one.split(',').map(Number) },
  { name: 'phase_two', json: load(twoPath), span: flags.two.split(',').map(Number) },
];

await runPageTest({ viewport: { width: 1400, height: 900 } }, null, async (b) => {
  const page = await b.open(pagePath);
  const api = (fn, arg) => ev(page, fn, arg);
  const tl = await api(() => window.tbView.timeline());
  check('the page has a timeline', tl && tl.buckets === whole.timeline.buckets && await page.isVisible('#tl'), JSON.stringify(tl));
  const wholeTotal = await totalShown(page);
  check('whole capture: the total of the tree JSON', wholeTotal === whole.tree.value, `${wholeTotal} vs ${whole.tree.value}`);

  for (const ph of phases) {
    const t0 = Date.now();
    const shown = await api(([a, b]) => window.tbView.timeRange(a, b), ph.span);
    const ms = Date.now() - t0;
    const matched = await api((n) => window.tbView.search(n), ph.name);
    const want = valueOf(ph.json.tree, ph.name);
    check(`${ph.name}: brushed total is render --from/--to's`, shown === ph.json.tree.value && (await totalShown(page)) === shown,
      `${shown} vs ${ph.json.tree.value}, ${ms} ms`);
    check(`${ph.name}: its samples are render --from/--to's`, matched === want, `${matched} vs ${want}`);
    check(`${ph.name}: >= 95% of the range`, shown > 0 && matched / shown >= 0.95, `${(100 * matched / shown).toFixed(1)}%`);
    const hot = await page.textContent('#hotspots');
    check(`${ph.name}: the first hotspot`, hot.trim().startsWith(ph.name), hot.slice(0, 60));
    const threads = await page.textContent('#thread-select');
    check(`${ph.name}: the thread list counts the range`, threads.includes(new Intl.NumberFormat('en-US').format(shown) + ' samples'), threads.slice(0, 160));
    await api(() => window.tbView.search(''));
  }

  // a mouse drag over phase one (100 ms inside its bounds)
  await api(() => window.tbView.timeRange(null));
  const box = await page.locator('#tl').boundingBox();
  const x = (s) => box.x + (s / (tl.buckets * tl.bucket_s)) * box.width;
  const [a, z] = phases[0].span;
  await page.mouse.move(x(a + 0.1), box.y + 30);
  await page.mouse.down();
  await page.mouse.move(x((a + z) / 2), box.y + 30, { steps: 4 });
  await page.mouse.move(x(z - 0.1), box.y + 30, { steps: 4 });
  await page.mouse.up();
  const r = (await api(() => window.tbView.timeline())).range, dragged = await totalShown(page);
  const m1 = await api(() => window.tbView.search('phase_one'));
  check('drag: a range inside phase one', r && r[0] > 0 && r[1] < tl.buckets && dragged > 0 && m1 / dragged >= 0.95,
    `${JSON.stringify(r)}, ${(100 * m1 / Math.max(1, dragged)).toFixed(1)}% phase_one`);
  await api(() => window.tbView.search(''));

  // hovering a frame: when it ran
  await api(() => window.tbView.timeRange(null));
  const loc = await api(() => window.tbView.locate('phase_two'));
  if (loc) await page.mouse.move(loc.x, loc.y);
  const hov = await api(() => window.tbView.timelineHover());
  check('hovering phase_two highlights its samples in the strip', loc && hov === valueOf(whole.tree, 'phase_two'), `${hov}`);
  await page.mouse.move(box.x + 5, box.y - 30);

  // keyboard: arrows move the range, Esc resets
  await api(([a, b]) => window.tbView.timeRange(a, b), phases[0].span);
  const before = (await api(() => window.tbView.timeline())).range;
  await page.focus('#tl');
  await page.keyboard.press('ArrowRight');
  const after = (await api(() => window.tbView.timeline())).range;
  check('ArrowRight moves the range', after && after[0] > before[0] && after[1] - after[0] === before[1] - before[0], `${before} -> ${after}`);
  await page.keyboard.press('Shift+ArrowRight');
  const wider = (await api(() => window.tbView.timeline())).range;
  check('Shift+ArrowRight widens it', wider && wider[0] === after[0] && wider[1] > after[1], `${after} -> ${wider}`);
  await page.keyboard.press('Escape');
  check('Esc: the whole capture', (await api(() => window.tbView.timeline())).range === null && (await totalShown(page)) === wholeTotal);
  await api(([a, b]) => window.tbView.timeRange(a, b), phases[1].span);
  await page.click('#tl-reset');
  const nthreads = Object.keys(whole.threads).length, nprocs = whole.meta.processes.length;
  const perThread = await api(() => window.tbView.timeline());
  await page.click('#tl-group');
  const perProc = await api(() => window.tbView.timeline());
  check('"Per process" stacks the strip per process', perThread.stacked === 'threads' && perThread.groups <= nthreads &&
    perProc.stacked === 'processes' && perProc.groups === nprocs && (await page.textContent('#tl-group')) === 'Per process',
    `${perThread.groups} threads, ${perProc.groups} processes`);
  await page.click('#tl-group');
  check('"Whole capture" resets', (await api(() => window.tbView.timeline())).range === null && (await totalShown(page)) === wholeTotal);
  await b.shot(page, 'timeline');
});

#!/usr/bin/env node
// Browser test of asyncio task frames on the flame graph page (--async-aware): the task
// selector is shown with every running task of the JSON's "tasks" (names literal, hostile ones
// too), choosing a task recomputes the total to that task's samples (expected from the JSON,
// independently of the page: the self of frames whose innermost task frame is that task), its
// coroutine's frames keep their samples while the other task's vanish, task frames have their
// own (teal) colour, and "All tasks" restores the total.
//
//   node tasks.test.mjs PAGE.html PROFILE.json [--label NAME]
//
// The last line printed is "N passed, N failed"; the exit status is non-zero on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { check, ev, parseArgs, runPageTest, setLabel, totalShown } from './harness.mjs';

const { flags, pos } = parseArgs(process.argv.slice(2), { '--label': 'value' }, 2,
  'node tasks.test.mjs PAGE.html PROFILE.json [--label NAME]');
const [pagePath, jsonPath] = pos;
setLabel(flags.label || path.basename(pagePath, '.html'));

const data = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const tasks = (data.tasks && data.tasks.list) || [];
/** Samples whose innermost task frame is task (and, with fn, with a frame named fn on their path). */
function selfUnder(task, fn) {
  let total = 0;
  const go = (n, cur, has) => {
    const t = n.kind === 'task' ? n.name : cur, h = has || fn == null || n.name === fn;
    if (t === task && h) total += n.self;
    for (const c of n.children || []) go(c, t, h);
  };
  go(data.tree, null, false);
  return total;
}
/** A name as the page shows it: control characters as \xNN / \uNNNN, the rest literal. */
const shownName = (s) => s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]/g, (c) => {
  const x = c.charCodeAt(0).toString(16);
  return x.length <= 2 ? '\\x' + x.padStart(2, '0') : '\\u' + x.padStart(4, '0');
});
const hueOf = (c) => { const m = /^hsl\((\d+(?:\.\d+)?),/.exec(String(c)); return m ? Number(m[1]) : NaN; };

await runPageTest({ viewport: { width: 1400, height: 900 } }, null, async (b) => {
  const page = await b.open(pagePath);
  const api = (fn, arg) => ev(page, fn, arg);
  check('the JSON lists at least two running tasks', tasks.length >= 2, JSON.stringify(tasks.map((t) => t.name)));
  const all = await totalShown(page);
  const shown = await api(() => window.tbView.tasks());
  check('the page lists the JSON\'s tasks, names literal (control characters escaped)',
    JSON.stringify(shown.map((t) => t.name)) === JSON.stringify(tasks.map((t) => shownName(t.name))), JSON.stringify(shown.map((t) => t.name)));
  check('the task selector is visible', await page.isVisible('#task-select'));
  const options = await page.$$eval('#task-select option', (os) => os.map((o) => o.textContent));
  check('every task is an option, its name as text', tasks.every((t) => options.some((o) => o.startsWith(shownName(t.name)))), JSON.stringify(options));
  for (const t of tasks) {
    const want = selfUnder(t.name, null);
    const got = await api((n) => window.tbView.selectTask(n), t.name);
    check(`task ${JSON.stringify(t.name)}: total = its samples (${want})`, got === want && (await totalShown(page)) === want, got);
    check(`task ${JSON.stringify(t.name)}: the JSON's count agrees (${t.samples})`, Math.abs(t.samples - want) <= Math.max(2, 0.02 * t.samples));
    for (const o of tasks) {
      if (o === t) continue;
      // a search by name matches the other task's frames: only where it awaits this one
      const other = await api((n) => { window.tbView.search(n); return window.tbView.matched(); }, shownName(o.name));
      check(`task ${JSON.stringify(t.name)}: ${JSON.stringify(o.name)} only as its awaiter (${selfUnder(t.name, o.name)})`,
        other === selfUnder(t.name, o.name), other);
    }
    if (!want) continue;  // a task with a sample or two (the parent between awaits) is pruned: nothing to draw
    const info = await api((n) => window.tbView.frameInfo(n), shownName(t.name));
    check(`task frame ${JSON.stringify(t.name)} drawn teal`, info && info.kind === 'task' && hueOf(info.solid) >= 176 && hueOf(info.solid) < 190, info && info.solid);
  }
  await api(() => window.tbView.search(''));
  const back = await api(() => window.tbView.selectTask(null));
  check('All tasks restores the total', back === all && (await totalShown(page)) === all, `${back} vs ${all}`);
});

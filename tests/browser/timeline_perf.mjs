#!/usr/bin/env node
// timeline_perf.mjs: page load and brush times of a flame graph page with a timeline (for
// bench/timeline.sh: a generated 1-hour host-wide capture). Prints "# timeline perf: ..." lines
// and checks that the page loads and a brush recomputes within the budgets.
//
//   node timeline_perf.mjs PAGE.html [--runs N] [--label NAME]
import path from 'node:path';
import { check, ev, parseArgs, runPageTest, setLabel, totalShown } from './harness.mjs';

const { flags, pos } = parseArgs(process.argv.slice(2), { '--runs': 'number', '--label': 'value' }, 1,
  'node timeline_perf.mjs PAGE.html [--runs N] [--label NAME]');
setLabel(flags.label || path.basename(pos[0], '.html'));
const runs = flags.runs || 3;
const budgetLoad = Number(process.env.TB_TIMELINE_LOAD_BUDGET_MS || 15000);
const budgetBrush = Number(process.env.TB_TIMELINE_BRUSH_BUDGET_MS || 2000);

await runPageTest({ viewport: { width: 1400, height: 900 } }, null, async (b) => {
  const loads = [], brushes = [];
  let tl = null, whole = 0;
  for (let i = 0; i < runs; i++) {
    const page = await b.open(pos[0], { timeout: 120000 });
    loads.push(await ev(page, () => window.tbView.timings.firstRender));
    if (!i) console.log('# timings ' + JSON.stringify(await ev(page, () => { const t = window.tbView.timings, o = {}; for (const k in t) o[k] = Math.round(t[k]); o.nodes = window.tbView.state ? undefined : 0; return o; })));
    tl = await ev(page, () => window.tbView.timeline());
    whole = await totalShown(page);
    const span = tl.buckets * tl.bucket_s;
    const t0 = Date.now();
    const shown = await ev(page, ([a, z]) => window.tbView.timeRange(a, z), [span * 0.1, span * 0.1 + 300]);
    brushes.push(Date.now() - t0);
    if (!i) console.log('# brush ' + JSON.stringify(await ev(page, () => { const t = window.tbView.timings; return { slice: Math.round(t.brushSlice), ingest: Math.round(t.brushIngest), select: Math.round(t.lastSelect) }; })));
    check(`run ${i + 1}: a 5-minute range shows part of the samples`, shown > 0 && shown < whole, `${shown} of ${whole}`);
    await page.close();
  }
  const best = (a) => Math.min(...a);
  console.log(`# timeline perf: ${tl.buckets} buckets of ${tl.bucket_s} s, ${whole} samples; first render ${loads.map((x) => x.toFixed(0)).join(', ')} ms; brush 5 min ${brushes.join(', ')} ms`);
  check('page load within budget', best(loads) < budgetLoad, `best ${best(loads).toFixed(0)} ms, budget ${budgetLoad}`);
  check('brush within budget', best(brushes) < budgetBrush, `best ${best(brushes)} ms, budget ${budgetBrush}`);
});

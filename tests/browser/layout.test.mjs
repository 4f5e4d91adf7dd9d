#!/usr/bin/env node
// Layout of the flame graph page at common screen sizes (issue 26, "the first hour"), on real
// captures, each page with the tree JSON embedded in it:
//
//   node layout.test.mjs --deep PAGE.html DATA.json --wall PAGE.html DATA.json --empty PAGE.html DATA.json
//                        --few PAGE.html DATA.json [--toolbars PAGE.html ...] [--sizes 1280x800,1400x900,1920x1080] [--shots DIR]
//
// --deep (a CPU capture of tests/workloads/deep.py: a stack deeper than the view, and a timeline),
// at each size: the graph gets >= 60% of the width; the toolbars are one line each, every control
// inside the viewport, none over another, no label cut (scrollWidth <= clientWidth); the GIL and
// GC lane labels apart and inside the strip; zooming into the deepest frame leaves the breadcrumb
// bar and the graph where they were (one line); after Esc the whole graph is back in view (the
// root row drawn on the canvas's visible part); in the dark theme the timeline strip is dark.
// --wall (a wall-mode capture): the sidebar shows no share over 100%, the weighted samples as the
// JSON's python_samples, records per second from the records (samples + off_cpu_records).
// --empty (0 samples): a message that says so and what to do, no graph. --few (< 50 samples): a
// warning banner with the count; --deep has none. --toolbars (any page: a diff, one with native and
// kernel frames, hostile names): the width and toolbar checks at each size.
// A failed check keeps a screenshot in the shots folder (tests/browser/artifacts/) and prints
// its path. The last line printed is "N passed, N failed".
import fs from 'node:fs';
import path from 'node:path';
import { check, ev, parseArgs, runPageTest, setLabel } from './harness.mjs';

const { flags } = parseArgs(process.argv.slice(2), {
  '--deep': 'list', '--wall': 'list', '--empty': 'list', '--few': 'list', '--toolbars': 'list', '--sizes': 'value', '--shots': 'value',
}, 0, 'node layout.test.mjs --deep PAGE JSON --wall PAGE JSON --empty PAGE JSON --few PAGE JSON');
// a 'list' option takes one value; the JSON comes as the next positional: take pairs from argv
const argv = process.argv.slice(2), pair = (o) => { const i = argv.indexOf(o); return i >= 0 && argv[i + 2] ? [argv[i + 1], argv[i + 2]] : null; };
const pages = { deep: pair('--deep'), wall: pair('--wall'), empty: pair('--empty'), few: pair('--few') };
const sizes = (flags.sizes || '1280x800,1400x900,1920x1080').split(',').map((s) => s.split('x').map(Number));
const readJson = (p) => JSON.parse(fs.readFileSync(p, 'utf8'));
const metaOf = (p) => readJson(p).meta || {};
let B;

/** A check that keeps a screenshot when it fails. */
async function checkShot(page, shotName, name, ok, detail) {
  if (!check(name, ok, detail)) {
    const file = path.join(B.shots, `layout-${shotName}.png`);
    await B.shot(page, `layout-${shotName}`).catch(() => {});
    console.log(`#   screenshot: ${file}`);
  }
  return ok;
}

/** Boxes of the visible controls of each toolbar, their text fit, and each bar's height. */
const toolbars = () => {
  const bars = [...document.querySelectorAll('header > .top, header > .controls, #crumbs-bar, .tl-head')].filter((b) => b.offsetParent !== null);
  return bars.map((bar) => {
    const els = [...bar.querySelectorAll('button, select, input, label.chk, .lbl, #tl-label')]
      .filter((e) => e.offsetParent !== null && !e.closest('#crumbs') && !(e.tagName === 'INPUT' && e.closest('label.chk')));
    return {
      bar: bar.id || bar.className, height: bar.getBoundingClientRect().height,
      els: els.map((e) => {
        const r = e.getBoundingClientRect();
        // a select's text is its own (no scrollWidth); #tl-label is elided with an ellipsis and a title by design
        const cut = e.tagName === 'BUTTON' || e.tagName === 'LABEL' || (e.classList.contains('lbl')) ? e.scrollWidth > e.clientWidth + 1 : false;
        return { id: e.id || e.textContent.trim().slice(0, 20), x: r.left, y: r.top, r: r.right, b: r.bottom, cut };
      }),
    };
  });
};
/** Non-background pixels in the part of the graph's canvas that is on screen, and in its bottom row band. */
const canvasInk = () => {
  const c = document.getElementById('fg'), g = document.getElementById('graph'), d = window.devicePixelRatio || 1;
  const gb = g.getBoundingClientRect(), cb = c.getBoundingClientRect();
  const top = Math.max(gb.top, cb.top), bot = Math.min(gb.bottom, cb.bottom);
  if (bot - top < 2) return { ink: 0, rows: 0 };
  const ctx = c.getContext('2d'), y0 = Math.round((top - cb.top) * d), h = Math.round((bot - top) * d), w = c.width;
  const px = ctx.getImageData(0, y0, w, h).data, bg = ctx.getImageData(w - 1, y0, 1, 1).data;
  let ink = 0;
  const rows = new Set();
  for (let y = 0; y < h; y += 2) for (let x = 0; x < w; x += 4) {
    const i = (y * w + x) * 4;
    if (Math.abs(px[i] - bg[0]) + Math.abs(px[i + 1] - bg[1]) + Math.abs(px[i + 2] - bg[2]) > 30) { ink++; rows.add(Math.floor(y / (18 * d))); }
  }
  return { ink, rows: rows.size, visibleH: bot - top };
};

/** The graph's width and the toolbars at one size (tag names the page's screenshots). */
async function widthAndToolbars(page, [w, h], tag) {
  // ---- width
  const gw = await ev(page, () => document.getElementById('graph').getBoundingClientRect().width);
  await checkShot(page, `${tag}-width`, `${tag}: the graph gets >= 60% of the width by default`, gw >= 0.6 * w, `${Math.round(gw)} of ${w} px (${Math.round((100 * gw) / w)}%)`);
  // ---- toolbars: one line, inside the viewport, no overlap, labels whole
  const tb = await ev(page, toolbars), bad = [];
  for (const b of tb) {
    if (b.height > 44) bad.push(`${b.bar}: ${Math.round(b.height)} px high`);
    for (const e of b.els) {
      if (e.x < -0.5 || e.r > w + 0.5 || e.y < -0.5 || e.b > h + 0.5) bad.push(`${e.id} outside the viewport (${Math.round(e.x)}..${Math.round(e.r)})`);
      if (e.cut) bad.push(`${e.id} cut`);
    }
    for (let i = 0; i < b.els.length; i++) for (let j = i + 1; j < b.els.length; j++) {
      const a = b.els[i], c = b.els[j];
      if (a.x < c.r - 0.5 && c.x < a.r - 0.5 && a.y < c.b - 0.5 && c.y < a.b - 0.5) bad.push(`${a.id} over ${c.id}`);
    }
  }
  await checkShot(page, `${tag}-toolbars`, `${tag}: toolbars one line each, every control inside the viewport, none over another, no label cut (${tb.reduce((a, b) => a + b.els.length, 0)} controls)`, bad.length === 0, bad.slice(0, 4).join('; ') || undefined);
  // long names (processes, threads) are cut with an ellipsis and given whole in the tooltip
  const sel = await ev(page, () => ['process-select', 'thread-select'].map((id) => { const e = document.getElementById(id), o = e.options[e.selectedIndex]; return { id, title: e.title, text: o ? o.textContent : '', r: e.getBoundingClientRect().right }; }));
  check(`${tag}: the process and thread selectors' tooltips give the chosen entry whole`, sel.every((x) => x.text && x.title.includes(x.text) && x.r <= w + 0.5), JSON.stringify(sel.map((x) => x.title.slice(0, 60))));
}

async function deepChecks(page, [w, h], json) {
  const tag = `${w}x${h}`;
  await page.setViewportSize({ width: w, height: h });
  await page.waitForTimeout(150);
  await widthAndToolbars(page, [w, h], tag);
  // ---- the timeline's lane labels
  const lanes = await ev(page, () => {
    const r = (id) => { const b = document.getElementById(id).getBoundingClientRect(); return { x: b.left, y: b.top, r: b.right, b: b.bottom, h: b.height }; };
    return document.getElementById('timeline').hidden ? null : { gil: r('tl-gil'), gc: r('tl-gc'), tl: r('tl') };
  });
  if (await checkShot(page, `${tag}-timeline`, `${tag}: the timeline strip is shown`, !!lanes)) {
    const { gil, gc, tl } = lanes, inside = (a) => a.x >= tl.x - 0.5 && a.r <= tl.r + 0.5 && a.y >= tl.y - 0.5 && a.b <= tl.b + 0.5;
    await checkShot(page, `${tag}-lanes`, `${tag}: the GIL and GC lane labels do not overlap and sit inside the strip`, gil.h > 0 && gc.h > 0 && (gil.b <= gc.y + 0.5 || gc.b <= gil.y + 0.5) && inside(gil) && inside(gc),
      `GIL ${Math.round(gil.y)}..${Math.round(gil.b)}, GC ${Math.round(gc.y)}..${Math.round(gc.b)}, strip ${Math.round(tl.y)}..${Math.round(tl.b)}`);
  }
  // ---- zoom into the deepest frame: no layout jump; Esc: the whole graph in view
  const before = await ev(page, () => ({ bar: document.getElementById('crumbs-bar').getBoundingClientRect().height, graph: document.getElementById('graph').getBoundingClientRect().top }));
  const deepest = await ev(page, () => { const bl = tbView.blocks().filter((b) => b[0] && b[3] > 20); bl.sort((a, b) => b[1] - a[1]); return bl[0] ? bl[0][0] : null; });
  const loc = deepest && (await ev(page, (q) => tbView.locate(q), deepest));
  if (await checkShot(page, `${tag}-zoom`, `${tag}: the deepest wide frame is located`, !!loc, deepest)) {
    await page.mouse.click(loc.x, loc.y);
    await page.waitForTimeout(100);
    const after = await ev(page, () => {
      const c = document.getElementById('crumbs');
      return { bar: document.getElementById('crumbs-bar').getBoundingClientRect().height, graph: document.getElementById('graph').getBoundingClientRect().top, crumbs: c.querySelectorAll('button').length,
        oneLine: c.scrollHeight <= c.clientHeight + 1, zoom: tbView.state().zoom, lastVisible: (() => { const b = [...c.querySelectorAll('button')].pop(), r = b.getBoundingClientRect(), cr = c.getBoundingClientRect(); return r.right <= cr.right + 1 && r.left >= cr.left - 1; })() };
    });
    await checkShot(page, `${tag}-zoomed`, `${tag}: zoomed into ${JSON.stringify(deepest)} (${after.crumbs} crumbs): the breadcrumb bar keeps its height and stays one line, the graph does not move, the deepest crumb in view`,
      after.zoom != null && after.bar === before.bar && after.graph === before.graph && after.oneLine && after.lastVisible && after.crumbs > 10, JSON.stringify({ before, after }));
    await page.mouse.move(2, 2);
    await page.keyboard.press('Escape');
    await page.waitForTimeout(100);
    const esc = await ev(page, () => ({ zoom: tbView.state().zoom, drawn: tbView.nodesDrawn() }));
    const ink = await ev(page, canvasInk);
    // the root row and its process are drawn on the visible part of the canvas
    await checkShot(page, `${tag}-esc`, `${tag}: after Esc the whole graph is in view (frames drawn on the visible canvas)`, esc.zoom === null && esc.drawn > 0 && ink.ink > 200 && ink.rows >= 3,
      JSON.stringify({ ...esc, ...ink }));
  }
  // ---- dark theme: the timeline strip's background follows
  await page.keyboard.press('t');
  await page.waitForTimeout(100);
  const dark = await ev(page, () => {
    // the top row: the stacked chart's bars stop 2 px below it (drawTimeline), so it is background
    const c = document.getElementById('tl'), d = c.getContext('2d').getImageData(0, 0, c.width, 1).data, count = new Map();
    for (let i = 0; i < d.length; i += 4) { const k = (d[i] >> 4) + ',' + (d[i + 1] >> 4) + ',' + (d[i + 2] >> 4); count.set(k, (count.get(k) || 0) + 1); }
    const [k] = [...count].sort((a, b) => b[1] - a[1])[0], [r, g, b] = k.split(',').map((x) => x * 16 + 8);
    return { theme: document.documentElement.dataset.theme, commonest: [r, g, b], lum: 0.2126 * r + 0.7152 * g + 0.0722 * b };
  });
  await checkShot(page, `${tag}-dark`, `${tag}: dark theme: the timeline strip's background is dark`, dark.theme === 'dark' && dark.lum < 80, JSON.stringify(dark));
  await page.keyboard.press('t');
  check(`${tag}: the deep capture (${metaOf(json).python_samples} samples) has no few-samples banner`, !(await page.isVisible('#banner')));
}

async function run() {
  if (pages.deep) {
    setLabel('layout-deep');
    const page = await B.open(pages.deep[0]);
    await page.mouse.click(2, 2);
    for (const s of sizes) await deepChecks(page, s, pages.deep[1]);
    await page.close();
  }
  for (const p of flags.toolbars) {
    const name = path.basename(p, '.html');
    setLabel('layout-' + name);
    const page = await B.open(p);
    await page.mouse.click(2, 2);
    for (const [w, h] of sizes) {
      await page.setViewportSize({ width: w, height: h });
      await page.waitForTimeout(150);
      await widthAndToolbars(page, [w, h], `${name}-${w}x${h}`);
    }
    await page.close();
  }
  if (pages.wall) {
    setLabel('layout-wall');
    const m = metaOf(pages.wall[1]);
    const page = await B.open(pages.wall[0]);
    const side = await ev(page, () => ({ text: document.getElementById('sidebar').innerText, total: Number(document.getElementById('total-samples').dataset.value), rate: document.getElementById('st-rate').textContent, rateK: document.getElementById('st-rate-k').textContent, weight: (document.getElementById('wall-weight') || {}).textContent || '' }));
    const over = (side.text.match(/\d[\d,]*(\.\d+)?%/g) || []).filter((p) => parseFloat(p.replace(/,/g, '')) > 100);
    check(`wall mode (${m.samples} on-CPU samples, ${m.off_cpu_records} switch records, ${m.python_samples} weighted): no share over 100% in the sidebar`, m.mode === 'wall' && over.length === 0, over.join(' ') || undefined);
    check('wall mode: the total is the weighted samples (python_samples)', side.total === m.python_samples, `${side.total} vs ${m.python_samples}`);
    const rec = m.samples + m.off_cpu_records, want = new Intl.NumberFormat('en-US').format(Math.round(rec / m.duration_s)) + '/s';
    check('wall mode: "Records/s" from the records (on-CPU samples + off-CPU switch records) per second', side.rateK === 'Records/s' && side.rate === want, `${side.rate} vs ${want}`);
    const nf = (x) => new Intl.NumberFormat('en-US').format(x);
    check('wall mode: the weight shown apart: on-CPU + off-CPU samples and the records', side.weight.includes(`${nf(m.python_samples - m.off_cpu_samples)} on-CPU + ${nf(m.off_cpu_samples)} off-CPU`) && side.weight.includes(`${nf(rec)} records`), JSON.stringify(side.weight));
    await page.close();
  }
  if (pages.empty) {
    setLabel('layout-empty');
    const m = metaOf(pages.empty[1]);
    const page = await B.open(pages.empty[0]);
    const st = await ev(page, () => ({ ready: document.body.dataset.ready, shown: !document.getElementById('empty').hidden, text: document.getElementById('empty').textContent, graph: !document.getElementById('graph').hidden }));
    await checkShot(page, 'empty', `empty capture (${m.python_samples} samples): "No samples were taken", why and what to do (--mode wall, -d), instead of a blank graph`,
      m.python_samples === 0 && st.ready === '1' && st.shown && !st.graph && /No samples were taken/.test(st.text) && (m.mode !== 'cpu' || st.text.includes('--mode wall')) && st.text.includes('-d'), JSON.stringify({ ...st, text: st.text.slice(0, 100) }));
    await page.close();
  }
  if (pages.few) {
    setLabel('layout-few');
    const m = metaOf(pages.few[1]);
    const page = await B.open(pages.few[0]);
    const ban = (await page.isVisible('#banner')) ? await page.textContent('#banner') : null;
    await checkShot(page, 'few', `a capture of ${m.python_samples} samples: a visible warning that it is not statistically meaningful`,
      m.python_samples > 0 && m.python_samples < 50 && !!ban && ban.includes(`Only ${m.python_samples} sample`) && /statistically meaningful/.test(ban), JSON.stringify(ban && ban.slice(0, 100)));
    await page.close();
  }
}

await runPageTest({ viewport: { width: sizes[0][0], height: sizes[0][1] }, colorScheme: 'light' }, flags.shots, async (b) => {
  B = b;
  await run();
});

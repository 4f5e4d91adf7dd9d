#!/usr/bin/env node
// Browser test of native and kernel frames on the flame graph page (--native, --kernel):
// their own colours (kernel green, native blue-violet, never a Python hue) in both themes, the
// legend, and the "Hide native" / "Hide kernel" toggles (buttons, keys n and k, keyboard focus):
// a hidden frame's time goes to its nearest shown ancestor, so every Python function keeps its
// samples (search counts), the total stays, and the ancestor's self grows by exactly the hidden
// frames' self (expected values computed here from the JSON, independently of the page), also
// for one thread; hidden frames are not drawn nor found.
//
//   node kinds.test.mjs PAGE.html PROFILE.json [--plain PLAIN.html] [--label NAME]
//
// --plain: a page without native or kernel frames, whose toggles must stay hidden.
// The last line printed is "N passed, N failed"; the exit status is non-zero on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { check, ev, parseArgs, runPageTest, setLabel, totalShown, walk } from './harness.mjs';

const { flags, pos } = parseArgs(process.argv.slice(2), { '--plain': 'value', '--label': 'value' }, 2,
  'node kinds.test.mjs PAGE.html PROFILE.json [--plain PLAIN.html] [--label NAME]');
const [pagePath, jsonPath] = pos;
setLabel(flags.label || path.basename(pagePath, '.html'));

// ------------------------------------------------------------------ expected values from the JSON
const data = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
const tree = data.tree;
const KINDS = ['native', 'kernel'];
const byKind = { frame: new Map(), native: new Map(), kernel: new Map() };   // name -> total value over nodes
walk(tree, (n) => { if (byKind[n.kind]) byKind[n.kind].set(n.name, (byKind[n.kind].get(n.name) || 0) + n.value); });
const has = { native: byKind.native.size > 0, kernel: byKind.kernel.size > 0 };
const widest = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k]) => k)[0];
const pyNames = [...byKind.frame.keys()].filter((k) => !/^</.test(k) && !/[^\w.]/.test(k));
/** Self of the frames named name once the kinds in hide are hidden: their own self plus the self
 *  of hidden frames reached from them through hidden frames only (tid: that thread's). */
function selfAfter(name, hide, tid) {
  const own = (n) => (tid == null ? n.self : n.thread_values && n.thread_values[tid] ? n.thread_values[tid][1] : 0);
  const hiddenSelf = (n) => (n.children || []).filter((c) => hide[c.kind]).reduce((a, c) => a + own(c) + hiddenSelf(c), 0);
  let total = 0;
  walk(tree, (n) => { if (n.kind === 'frame' && n.name === name) total += own(n) + hiddenSelf(n); });
  return total;
}
const hueOf = (c) => { const m = /^hsl\((\d+(?:\.\d+)?),/.exec(String(c)); return m ? Number(m[1]) : NaN; };

await runPageTest({ viewport: { width: 1400, height: 900 } }, null, async (b) => {
  const page = await b.open(pagePath);
  const api = (fn, arg) => ev(page, fn, arg);
  check('the page says it has native / kernel frames', await api(() => JSON.stringify(window.tbView.state().kinds)) === JSON.stringify(has));

  // ---- colours and legend
  for (const dark of [false, true]) {
    const theme = dark ? 'dark' : 'light';
    if ((await api(() => window.tbView.state().dark)) !== dark) await api(() => window.tbView.theme());
    await api(() => window.tbView.search(''));
    if (has.kernel) {
      const k = widest(byKind.kernel), i = await api((n) => window.tbView.frameInfo(n), k);
      check(`${theme}: kernel frame ${k} drawn in green`, i && i.kind === 'kernel' && hueOf(i.solid) >= 96 && hueOf(i.solid) < 118, i && i.solid);
    }
    if (has.native) {
      const k = widest(byKind.native), i = await api((n) => window.tbView.frameInfo(n), k);
      check(`${theme}: native frame ${k} drawn in blue-violet`, i && i.kind === 'native' && hueOf(i.solid) >= 232 && hueOf(i.solid) < 254, i && i.solid);
    }
    const py = widest(new Map(pyNames.map((k) => [k, byKind.frame.get(k)])));
    const pi = await api((n) => window.tbView.frameInfo(n), py);
    check(`${theme}: Python frame ${py} keeps a warm hue`, pi && pi.kind === 'frame' && hueOf(pi.solid) < 50, pi && pi.solid);
    const legend = await api(() => [...document.querySelectorAll('#legend .sw[data-kind]')].map((e) => e.dataset.kind).join(','));
    check(`${theme}: legend lists the kinds`, legend.split(',').sort().join(',') === KINDS.filter((k) => has[k]).sort().join(','), legend);
  }
  await b.shot(page, 'kinds');
  const quality = await api(() => document.getElementById('quality').textContent);
  if (data.meta.kernel_stacks) check('sampling quality shows the kernel stacks', quality.includes('With kernel frames'), quality.slice(0, 200));
  if (data.meta.native_stacks) check('sampling quality shows unmerged native stacks', quality.includes('Unmerged native stacks'), quality.slice(0, 200));
  if (data.meta.kernel_stacks && data.meta.kernel_stacks.symbols_hidden)
    check('says kernel symbols were hidden', quality.includes('kernel symbols hidden: kptr_restrict='));

  // ---- the toggles
  const total0 = await totalShown(page);
  const count0 = {};
  for (const n of pyNames) count0[n] = await api((q) => window.tbView.search(q), n);
  await api(() => window.tbView.search(''));
  for (const k of KINDS) {
    const btn = `#hide-${k}`;
    check(`"Hide ${k}" button ${has[k] ? 'shown' : 'hidden'}`, (await page.isVisible(btn)) === has[k]);
  }
  const keyHelp = await page.isVisible('dt.kinds-only');
  check('keyboard help lists n / k', keyHelp === (has.native || has.kernel));
  const combos = [{ native: false, kernel: true }, { native: true, kernel: false }, { native: true, kernel: true }];
  for (const hide of combos) {
    if ((hide.native && !has.native) || (hide.kernel && !has.kernel)) continue;
    const what = KINDS.filter((k) => hide[k]).join(' + ');
    // by keyboard: n and k, from the current state
    const st = await api(() => window.tbView.state().hide);
    if (st.native !== hide.native) await page.keyboard.press('n');
    if (st.kernel !== hide.kernel) await page.keyboard.press('k');
    const now = await api(() => window.tbView.state().hide);
    check(`${what} hidden by keys`, now.native === hide.native && now.kernel === hide.kernel, JSON.stringify(now));
    for (const k of KINDS) {
      const pressed = await page.getAttribute(`#hide-${k}`, 'aria-pressed');
      if (has[k]) check(`${what}: "${k}" button pressed = ${hide[k]}`, pressed === String(hide[k]), pressed);
    }
    check(`${what}: total unchanged`, (await totalShown(page)) === total0, `${await totalShown(page)} vs ${total0}`);
    let same = true, detail = '';
    for (const n of pyNames) {
      const c = await api((q) => window.tbView.search(q), n);
      if (c !== count0[n]) { same = false; detail += `${n}: ${c} vs ${count0[n]} `; }
    }
    check(`${what}: every Python function keeps its samples`, same, detail || `${pyNames.length} functions`);
    await api(() => window.tbView.search(''));
    for (const k of KINDS) if (hide[k]) {
      const name = widest(byKind[k]);
      check(`${what}: ${k} frame ${name} not drawn`, (await api((n) => window.tbView.frameInfo(n), name)) === null);
      check(`${what}: search finds no ${k} frame`, (await api((q) => window.tbView.search(q), name)) === (byKind.frame.has(name) ? count0[name] : 0));
      await api(() => window.tbView.search(''));
    }
    for (const n of pyNames) {
      const want = selfAfter(n, hide), got = await api((q) => window.tbView.selfOf(q), n);
      if (want > 0)
        check(`${what}: ${n}'s self takes its hidden callees' (${want})`, got === want, got);
    }
    // one thread: the same for its values
    const tid = Object.keys(tree.thread_values || {}).sort((a, b) => tree.thread_values[b][0] - tree.thread_values[a][0])[0];
    await api((t) => window.tbView.selectThread(t), tid);
    check(`${what}, thread ${tid}: its samples`, (await totalShown(page)) === tree.thread_values[tid][0]);
    const py = pyNames.find((n) => selfAfter(n, hide, tid) > 0 && selfAfter(n, hide, tid) !== selfAfter(n, {}, tid));
    if (py) {
      const got = await api((q) => window.tbView.selfOf(q), py);
      check(`${what}, thread ${tid}: ${py}'s self per thread`, got === selfAfter(py, hide, tid), got);
    }
    await api(() => window.tbView.selectThread(null));
    const leg = await api(() => document.getElementById('legend').textContent);
    check(`${what}: legend says hidden`, KINDS.every((k) => !has[k] || leg.includes(`${k} frame${hide[k] ? ' (hidden)' : ''}`)), leg.slice(0, 120));
    await b.shot(page, `kinds-hide-${what.replace(/ \+ /g, '-')}`);
  }
  // back, by the buttons: focus and Enter (keyboard accessible), then a click
  for (const k of KINDS) if (has[k] && (await api(() => window.tbView.state().hide))[k]) {
    await page.focus(`#hide-${k}`);
    await page.keyboard.press('Enter');
  }
  const back = await api(() => window.tbView.state().hide);
  check('shown again through the focused buttons', !back.native && !back.kernel, JSON.stringify(back));
  check('total as at first', (await totalShown(page)) === total0);
  if (has.kernel) {
    await page.click('#hide-kernel');
    check('a click hides kernel frames', (await api(() => window.tbView.state().hide)).kernel === true);
    await page.click('#hide-kernel');
    check('a second click shows them', (await api(() => window.tbView.state().hide)).kernel === false);
  }

  if (flags.plain) {
    const plain = await b.open(flags.plain);
    const visible = (await plain.isVisible('#hide-native')) || (await plain.isVisible('#hide-kernel'));
    check('a profile without native or kernel frames has no toggles', !visible);
    await plain.keyboard.press('k');
    check('k does nothing there', JSON.stringify(await ev(plain, () => window.tbView.state().hide)) === '{"native":false,"kernel":false}');
  }
});

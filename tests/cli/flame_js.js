// Runs a perfscope flame graph's own script over a minimal DOM built from the SVG (no browser
// needed) and checks zoom, reset and search on the known profile of test_flamegraph.sh.
// usage: node flame_js.js FILE.svg   (exit 1 with the reason on a failure)
'use strict';
const fs = require('fs');
const vm = require('vm');

const svg = fs.readFileSync(process.argv[2], 'utf8');
function fail(msg) {
	console.error('flame_js: ' + msg);
	process.exit(1);
}

function unescape(s) {
	return s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}
function attrs(s) {
	const a = {};
	for (const m of s.matchAll(/([a-zA-Z-]+)="([^"]*)"/g))
		a[m[1]] = m[2];
	return a;
}
class El {
	constructor(tag, a, text) {
		this.tag = tag;
		this.attrs = a || {};
		this.children = [];
		this.textContent = text || '';
		this.style = {};
		this.handlers = {};
		this.parentNode = null;
	}
	getAttribute(k) { return this.attrs[k] === undefined ? null : this.attrs[k]; }
	setAttribute(k, v) { this.attrs[k] = String(v); }
	appendChild(c) { c.parentNode = this; this.children.push(c); return c; }
	getElementsByTagName(t) {
		const out = [];
		const walk = (e) => { for (const c of e.children) { if (c.tag === t) out.push(c); walk(c); } };
		walk(this);
		return out;
	}
	addEventListener(ev, fn) { this.handlers[ev] = fn; }
}

const root = new El('svg');
const byId = {};
for (const m of svg.matchAll(/<text id="(\w+)"([^>]*)>([^<]*)<\/text>/g)) {
	const e = root.appendChild(new El('text', attrs(m[2]), unescape(m[3])));
	byId[m[1]] = e;
	if (/display:none/.test(m[2]))
		e.style.display = 'none';
}
const frames = root.appendChild(new El('g'));
byId.frames = frames;
for (const m of svg.matchAll(/<g><title>([^<]*)<\/title><rect ([^>]*)\/>(?:<text ([^>]*)>([^<]*)<\/text>)?<\/g>/g)) {
	const g = frames.appendChild(new El('g'));
	g.appendChild(new El('title', {}, unescape(m[1])));
	g.appendChild(new El('rect', attrs(m[2])));
	if (m[3] !== undefined)
		g.appendChild(new El('text', attrs(m[3]), unescape(m[4])));
}
const script = svg.match(/<script[^>]*><!\[CDATA\[([\s\S]*?)\]\]><\/script>/)[1];
const windowHandlers = {};
const ctx = {
	document: {
		documentElement: root,
		getElementById: (id) => byId[id] || null,
		createElementNS: (ns, t) => new El(t),
	},
	window: { addEventListener: (ev, fn) => { windowHandlers[ev] = fn; } },
	prompt: () => null,
	alert: (m) => fail('alert: ' + m),
	Math, parseInt, RegExp,
};
vm.createContext(ctx);
vm.runInContext(script, ctx);
ctx.init({});

const frame = (name) => {
	for (const g of frames.children)
		if (g.children[0].textContent.startsWith(name + ' ('))
			return g;
	fail('no frame ' + name);
};
const rect = (name) => frame(name).children[1];
const width = (name) => +rect(name).getAttribute('width');
const shown = (name) => frame(name).style.display !== 'none';
const W = +svg.match(/var W=(\d+)/)[1], PAD = +svg.match(/PAD=(\d+)/)[1];
const near = (a, b, what) => { if (Math.abs(a - b) > 0.02) fail(`${what}: ${a}, expected ${b}`); };

// hover: the details line shows the frame's title
frames.handlers.mouseover({ target: rect('hot_a') });
if (!byId.details.textContent.startsWith('hot_a (30 samples'))
	fail('hover: details say ' + JSON.stringify(byId.details.textContent));

// click to zoom on work (40 of 47): work fills the width, hot_a 30/40 of it, sys_read hidden,
// main (an ancestor) kept at full width and dimmed, Reset Zoom shown
frames.handlers.click({ target: rect('work') });
near(width('work'), W - 2 * PAD, 'zoomed work width');
near(width('hot_a'), (W - 2 * PAD) * 30 / 40, 'zoomed hot_a width');
near(+rect('hot_a').getAttribute('x'), PAD, 'zoomed hot_a x');
if (shown('sys_read') || shown('do_syscall_64'))
	fail('zoom: frames outside work still shown');
if (!shown('main') || frame('main').style.opacity !== 0.6)
	fail('zoom: main, an ancestor, should be shown dimmed');
if (byId.unzoom.style.display !== '')
	fail('zoom: Reset Zoom not shown');
const lbl = frame('hot_b').children[2];
if (!lbl || lbl.textContent !== 'hot_b')
	fail('zoom: hot_b label ' + (lbl && lbl.textContent));

// reset (Esc): every frame back where it was
windowHandlers.keydown({ keyCode: 27, preventDefault() {} });
near(width('work'), (W - 2 * PAD) * 40 / 47, 'reset work width');
if (!shown('sys_read') || byId.unzoom.style.display !== 'none')
	fail('reset: not everything back');

// search: hot_a and hot_b cover 40 of 47; nested matches are counted once
ctx.search('^hot_');
if (byId.matched.textContent !== 'Matched: 85.11% (40 of 47 samples)')
	fail('search ^hot_: ' + byId.matched.textContent);
if (rect('hot_a').getAttribute('fill') !== 'rgb(230,0,230)' ||
    rect('work').getAttribute('fill') === 'rgb(230,0,230)')
	fail('search: highlight wrong');
ctx.search('main|work|hot');
if (byId.matched.textContent !== 'Matched: 100.00% (47 of 47 samples)')
	fail('search nested: ' + byId.matched.textContent);
ctx.search('');
if (rect('hot_a').getAttribute('fill') === 'rgb(230,0,230)' || byId.matched.textContent !== ' ')
	fail('search cleared: highlight left');
console.log('hover, zoom, reset, search: ok (' + frames.children.length + ' frames)');

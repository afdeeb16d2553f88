/* Native flame graphs: folded stacks merged into a tree, laid out, written as interactive SVG. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame_svg.h"
#include "hash.h"
#include "keymap.h"

enum kind { KIND_USER, KIND_KERNEL, KIND_UNKNOWN, KIND_ROOT };

struct name {
	const char *s; /* points into a flame's stack text or the "all" literal: not owned */
	uint32_t len; /* shown length (an "_[k]"-like suffix cut off) */
	uint32_t full_len;
	uint8_t kind;
	uint32_t hash; /* for the color */
};

struct node {
	uint32_t name;
	uint32_t first_child, next_sibling; /* 0: none (node 0 is the root, never a child) */
	uint64_t total[2]; /* samples through this frame: [0] drawn (after), [1] before (diff) */
};

struct tree {
	struct name *names;
	size_t nr_names, cap_names;
	struct keymap name_map; /* text hash -> name index, probed on collision */
	struct node *nodes;
	size_t nr_nodes, cap_nodes;
	struct keymap child_map; /* parent << 32 | name -> child node */
	bool reverse;
	int which; /* the count being added: 0 or 1 */
	int err;
};

static bool is_hex_addr(const char *s, size_t len)
{
	if (len < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (size_t i = 2; i < len; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
			return false;
	return true;
}

/* The kind of a frame from the conventions of folded text: perf's and ours. */
static enum kind classify(const char *s, size_t *len)
{
	size_t n = *len;

	/* stackcollapse-perf.pl --all and perfscope: "_[k]" kernel, "_[j]" JIT, "_[i]" inlined */
	if (n > 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    strchr("kjiw", s[n - 2]) && s[n - 2]) {
		*len = n - 4;
		if (s[n - 2] == 'k')
			return KIND_KERNEL;
		return KIND_USER;
	}
	if ((n >= 2 && s[0] == '[' && s[n - 1] == ']') || is_hex_addr(s, n))
		return KIND_UNKNOWN; /* "[unknown]", "[libc.so.6]", a bare address */
	return KIND_USER;
}

static uint32_t intern_name(struct tree *t, const char *s, size_t len)
{
	uint64_t h = hash__fnv(HASH_FNV_BASIS, s, len), *idx;
	struct name *nm;
	size_t shown = len;

	for (;;) {
		idx = keymap__find(&t->name_map, h);
		if (!idx)
			break;
		nm = &t->names[*idx];
		if (nm->full_len == len && !memcmp(nm->s, s, len))
			return (uint32_t)*idx;
		h = h * 0x9e3779b97f4a7c15ull + 1;
	}
	if (t->nr_names == t->cap_names) {
		size_t cap = t->cap_names ? t->cap_names * 2 : 1024;
		struct name *n = realloc(t->names, cap * sizeof(*n));

		if (!n)
			return UINT32_MAX;
		t->names = n;
		t->cap_names = cap;
	}
	idx = keymap__insert(&t->name_map, h, NULL);
	if (!idx || t->nr_names >= UINT32_MAX - 1)
		return UINT32_MAX;
	*idx = t->nr_names;
	nm = &t->names[t->nr_names];
	nm->s = s;
	nm->kind = (uint8_t)classify(s, &shown);
	nm->len = (uint32_t)shown;
	nm->full_len = (uint32_t)len;
	nm->hash = (uint32_t)(hash__fnv(HASH_FNV_BASIS, s, shown) >> 32);
	return (uint32_t)t->nr_names++;
}

static uint32_t child(struct tree *t, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	bool created;
	uint64_t *v = keymap__insert(&t->child_map, key, &created);
	struct node *n;

	if (!v || t->nr_nodes >= UINT32_MAX - 1)
		return 0;
	if (!created)
		return (uint32_t)*v;
	if (t->nr_nodes == t->cap_nodes) {
		size_t cap = t->cap_nodes * 2;
		struct node *nn = realloc(t->nodes, cap * sizeof(*nn));

		if (!nn) {
			keymap__remove(&t->child_map, key);
			return 0;
		}
		t->nodes = nn;
		t->cap_nodes = cap;
	}
	n = &t->nodes[t->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)t->nr_nodes;
	*v = t->nr_nodes;
	return (uint32_t)t->nr_nodes++;
}

static int add_frame(struct tree *t, uint32_t *at, const char *s, size_t len, uint64_t count)
{
	uint32_t name = intern_name(t, s, len), c;

	if (name == UINT32_MAX)
		return -ENOMEM;
	c = child(t, *at, name);
	if (!c)
		return -ENOMEM;
	if (t->nodes[c].total[t->which] > UINT64_MAX - count)
		return -ERANGE;
	t->nodes[c].total[t->which] += count;
	*at = c;
	return 0;
}

static int add_stack(void *ctx, const char *text, size_t len, uint64_t count)
{
	struct tree *t = ctx;
	uint32_t at = 0;
	int err;

	/* names point into the flame's own text, which stays while the SVG is written */
	if (t->nodes[0].total[t->which] > UINT64_MAX - count)
		return -ERANGE;
	t->nodes[0].total[t->which] += count;
	if (!t->reverse) {
		for (size_t i = 0; i <= len;) {
			const char *e = memchr(text + i, ';', len - i);
			size_t flen = e ? (size_t)(e - (text + i)) : len - i;

			err = add_frame(t, &at, text + i, flen, count);
			if (err)
				return err;
			i += flen + 1;
		}
	} else {
		for (size_t end = len;;) {
			size_t start = end;

			while (start && text[start - 1] != ';')
				start--;
			err = add_frame(t, &at, text + start, end - start, count);
			if (err)
				return err;
			if (!start)
				break;
			end = start - 1;
		}
	}
	return 0;
}

static void tree_free(struct tree *t)
{
	free(t->names);
	free(t->nodes);
	keymap__exit(&t->name_map);
	keymap__exit(&t->child_map);
}

static int tree_build(struct tree *t, const struct flame *after, const struct flame *before,
		      bool reverse)
{
	int err;

	memset(t, 0, sizeof(*t));
	t->reverse = reverse;
	t->cap_nodes = 1024;
	t->nodes = calloc(t->cap_nodes, sizeof(*t->nodes));
	t->names = malloc(sizeof(*t->names) * 1024);
	t->cap_names = 1024;
	if (!t->nodes || !t->names || keymap__init(&t->name_map, sizeof(uint64_t), 1024) ||
	    keymap__init(&t->child_map, sizeof(uint64_t), 1024))
		return -ENOMEM;
	t->nr_nodes = 1;
	/* the root: no frame of a stack can match it (its length is not a stack's) */
	t->names[0] =
		(struct name){ .s = "all", .len = 3, .full_len = UINT32_MAX, .kind = KIND_ROOT };
	t->nr_names = 1;
	err = flame__for_each(after, add_stack, t);
	if (!err && before) {
		t->which = 1;
		err = flame__for_each(before, add_stack, t);
	}
	return err;
}

/* ---------------------------------------------------------------- writing */

struct layout {
	const struct flame_svg_opts *o;
	struct tree *t;
	FILE *out;
	bool diff, emit;
	double scale; /* pixels per sample */
	double min_width;
	uint64_t min_count; /* frames of fewer samples are left out (max_frames) */
	size_t max_frames; /* and never more than these, whatever the counts (ties at 2^64 - 1) */
	uint64_t emitted; /* pass 2: frames written so far */
	unsigned int width, fh, top, bottom;
	uint64_t total[2];
	/* pass 1 */
	unsigned int depth;
	uint64_t drawn, only_before;
	double max_delta;
};

#define PAD 10
#define FONT 12
#define CHAR_W (FONT * 0.59)

/*
 * s as XML character data: markup characters escaped, and what XML cannot hold (control
 * characters, invalid UTF-8, U+FFFE/U+FFFF) replaced by U+FFFD, so any input gives well-formed
 * XML. At most max code points (then ".."), max 0: all.
 */
static void put_escaped(FILE *out, const char *s, size_t len, size_t max)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t cps = 0;

	while (p < end) {
		unsigned int c = *p, need, cp;

		if (max && cps == max) {
			fputs("..", out);
			return;
		}
		cps++;
		if (c < 0x80) {
			p++;
			if (c == '&')
				fputs("&amp;", out);
			else if (c == '<')
				fputs("&lt;", out);
			else if (c == '>')
				fputs("&gt;", out);
			else if (c == '"')
				fputs("&quot;", out);
			else if (c < 0x20 || c == 0x7f)
				fputs("\xef\xbf\xbd", out);
			else
				fputc((int)c, out);
			continue;
		}
		need = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		cp = c & (0x3f >> need);
		if (!need || c > 0xf4 || (size_t)(end - p) <= need)
			goto bad;
		for (unsigned int i = 1; i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				goto bad;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
			goto bad;
		fwrite(p, 1, need + 1, out);
		p += need + 1;
		continue;
	bad:
		fputs("\xef\xbf\xbd", out);
		p++;
	}
}

/* How the share of all samples of n changed from before to after (a fraction, not points). */
static double delta(const struct layout *l, const struct node *n)
{
	double before = l->total[1] ? (double)n->total[1] / (double)l->total[1] : 0;

	return (double)n->total[0] / (double)l->total[0] - before;
}

static void color(const struct layout *l, const struct node *n, const struct name *nm, char *buf,
		  size_t len)
{
	double v1 = (nm->hash & 0xff) / 255.0, v2 = ((nm->hash >> 8) & 0xff) / 255.0;

	if (l->diff) {
		double d = delta(l, n);
		int c = l->max_delta > 0 ? (int)lround(210 * fabs(d) / l->max_delta) : 0;

		if (d > 0)
			snprintf(buf, len, "rgb(255,%d,%d)", 255 - c, 255 - c);
		else
			snprintf(buf, len, "rgb(%d,%d,255)", 255 - c, 255 - c);
		return;
	}
	switch (nm->kind) {
	case KIND_KERNEL: /* blue-aqua */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(60 + 60 * v1), (int)(160 + 50 * v2),
			 (int)(205 + 40 * v1));
		break;
	case KIND_UNKNOWN:
	case KIND_ROOT: /* grey */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(175 + 30 * v1), (int)(175 + 30 * v1),
			 (int)(180 + 30 * v1));
		break;
	default: /* warm: red to yellow, as flamegraph.pl's "hot" */
		snprintf(buf, len, "rgb(%d,%d,%d)", (int)(205 + 50 * v2), (int)(230 * v1),
			 (int)(55 * v2));
	}
}

static void emit(struct layout *l, const struct node *n, double x, double w, unsigned int depth)
{
	const struct name *nm = &l->t->names[n->name];
	double y = l->t->reverse ? l->top + depth * l->fh : l->bottom - depth * l->fh;
	char fill[48];
	size_t chars;
	FILE *out = l->out;

	color(l, n, nm, fill, sizeof(fill));
	fputs("<g><title>", out);
	put_escaped(out, nm->s, nm->len, 0);
	fprintf(out, " (%llu %s, %.2f%%", (unsigned long long)n->total[0],
		l->o->count_name ? l->o->count_name : "samples",
		100.0 * (double)n->total[0] / (double)l->total[0]);
	if (l->diff) {
		double a = 100.0 * (double)n->total[0] / (double)l->total[0];
		double b = l->total[1] ? 100.0 * (double)n->total[1] / (double)l->total[1] : 0;

		fprintf(out, "; before %llu, %.2f%%; %+.2f points", (unsigned long long)n->total[1],
			b, a - b);
	}
	fprintf(out,
		")</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%u\" fill=\"%s\"/>",
		x, y, w, l->fh - 1, fill);
	chars = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (chars >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + l->fh - 5);
		/* "..": the two last places of a name that does not fit */
		put_escaped(out, nm->s, nm->len, chars >= nm->len ? 0 : chars - 2);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

struct walk_item {
	uint32_t node;
	unsigned int depth;
	double x;
};

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	const struct name *x = &t->names[t->nodes[*(const uint32_t *)a].name];
	const struct name *y = &t->names[t->nodes[*(const uint32_t *)b].name];
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Lays the tree out depth first: pass 1 (emit false) measures, pass 2 writes. */
static int walk(struct layout *l)
{
	struct tree *t = l->t;
	size_t cap = 256, nr = 0, ccap = 64;
	struct walk_item *st = malloc(cap * sizeof(*st));
	uint32_t *kids = malloc(ccap * sizeof(*kids));
	int err = 0;

	if (!st || !kids) {
		err = -ENOMEM;
		goto out;
	}
	st[nr++] = (struct walk_item){ 0, 0, PAD };
	while (nr) {
		struct walk_item it = st[--nr];
		const struct node *n = &t->nodes[it.node];
		double w = (double)n->total[0] * l->scale, cx;
		size_t nk = 0;

		if (!n->total[0])
			continue; /* only in before: counted apart */
		if (w < l->min_width || n->total[0] < l->min_count)
			continue; /* elided, with everything above it */
		/*
		 * The cap: preorder draws a frame before anything above it, so stopping here keeps
		 * what is drawn a tree; pass 2 stops where pass 1 did.
		 */
		if (l->emit ? l->emitted >= l->drawn : l->drawn >= l->max_frames)
			continue;
		if (l->emit) {
			emit(l, n, it.x, w, it.depth);
			l->emitted++;
		} else {
			l->drawn++;
			if (it.depth > l->depth)
				l->depth = it.depth;
			if (l->diff && fabs(delta(l, n)) > l->max_delta)
				l->max_delta = fabs(delta(l, n));
		}
		for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling) {
			if (nk == ccap) {
				uint32_t *k2 = realloc(kids, ccap * 2 * sizeof(*kids));

				if (!k2) {
					err = -ENOMEM;
					goto out;
				}
				kids = k2;
				ccap *= 2;
			}
			kids[nk++] = c;
		}
		qsort_r(kids, nk, sizeof(*kids), by_name, t);
		if (nr + nk > cap) {
			size_t ncap = (nr + nk) * 2;
			struct walk_item *s2 = realloc(st, ncap * sizeof(*st));

			if (!s2) {
				err = -ENOMEM;
				goto out;
			}
			st = s2;
			cap = ncap;
		}
		/* pushed last to first, so the first sorted child is drawn first */
		cx = it.x;
		for (size_t i = 0; i < nk; i++)
			cx += (double)t->nodes[kids[i]].total[0] * l->scale;
		for (size_t i = nk; i-- > 0;) {
			cx -= (double)t->nodes[kids[i]].total[0] * l->scale;
			st[nr++] = (struct walk_item){ kids[i], it.depth + 1, cx };
		}
	}
out:
	free(st);
	free(kids);
	return err;
}

static int by_count_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The fewest samples a drawn frame has, so that at most max frames are drawn: a frame is never
 * wider than its parent, so the frames of at least k samples are a tree from the root, and the
 * (max + 1)-th largest count bounds it. 0 when the budget is not reached.
 */
static int budget(struct layout *l, size_t max)
{
	const struct tree *t = l->t;
	double floor_d = ceil(l->min_width / l->scale);
	/* counts near 2^64 make the floor too large for a u64: nothing below it is drawn anyway */
	uint64_t *c,
		floor_count = floor_d >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)floor_d;
	size_t nr = 0;

	l->max_frames = max;
	if (t->nr_nodes <= max)
		return 0;
	c = malloc(t->nr_nodes * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_nodes; i++)
		if (t->nodes[i].total[0] >= floor_count && t->nodes[i].total[0])
			c[nr++] = t->nodes[i].total[0];
	if (nr > max) {
		qsort(c, nr, sizeof(*c), by_count_desc);
		/* at UINT64_MAX, more than max frames have every sample: walk's cap decides */
		l->min_count = c[max] == UINT64_MAX ? UINT64_MAX : c[max] + 1;
	}
	free(c);
	return 0;
}

static const char script[] =
	"var svg,details,unzoomBtn,matchedTxt,all=[],zoomed=null,searching=null;\n"
	"function init(evt){svg=document.documentElement;details=document.getElementById('details');\n"
	"unzoomBtn=document.getElementById('unzoom');matchedTxt=document.getElementById('matched');\n"
	"var gs=document.getElementById('frames').getElementsByTagName('g');\n"
	"for(var i=0;i<gs.length;i++){var g=gs[i],r=g.getElementsByTagName('rect')[0],\n"
	" tt=g.getElementsByTagName('title')[0].textContent,p=tt.lastIndexOf(' (');\n"
	" var f={g:g,r:r,t:g.getElementsByTagName('text')[0],title:tt,name:tt.substring(0,p),\n"
	"  n:parseInt(tt.substring(p+2),10),x:+r.getAttribute('x'),w:+r.getAttribute('width'),\n"
	"  y:+r.getAttribute('y'),fill:r.getAttribute('fill')};\n"
	" f.lvl=REVERSE?Math.round((f.y-TOP)/FH):Math.round((BOTTOM-f.y)/FH);g.psc=f;all.push(f);}\n"
	"var fr=document.getElementById('frames');\n"
	"fr.addEventListener('mouseover',function(e){var f=hit(e);if(f)details.textContent=f.title;});\n"
	"fr.addEventListener('mouseout',function(e){details.textContent=' ';});\n"
	"fr.addEventListener('click',function(e){var f=hit(e);if(f)zoom(f);});\n"
	"unzoomBtn.addEventListener('click',unzoom);\n"
	"document.getElementById('search').addEventListener('click',function(){search();});\n"
	"window.addEventListener('keydown',function(e){\n"
	" if((e.ctrlKey||e.metaKey)&&e.keyCode===70){e.preventDefault();search();}\n"
	" else if(e.keyCode===27){unzoom();clearSearch();}});}\n"
	"function hit(e){for(var n=e.target;n&&n!==svg;n=n.parentNode)if(n.psc)return n.psc;return null;}\n"
	"function label(a,x,w){var c=Math.floor((w-6)/(FONT*0.59)),s='';\n"
	" if(c>=3)s=a.name.length<=c?a.name:a.name.substring(0,c-2)+'..';\n"
	" if(!a.t){if(!s)return;a.t=document.createElementNS('http://www.w3.org/2000/svg','text');\n"
	"  a.t.setAttribute('y',a.y+FH-5);a.g.appendChild(a.t);}\n"
	" a.t.setAttribute('x',(x+3).toFixed(2));a.t.textContent=s;}\n"
	"function place(a,x,w){a.r.setAttribute('x',x.toFixed(2));a.r.setAttribute('width',w.toFixed(2));"
	"label(a,x,w);}\n"
	"function show(a,on,parent){a.g.style.display=on?'':'none';a.g.style.opacity=parent?0.6:'';}\n"
	"function zoom(f){zoomed=f;unzoomBtn.style.display='';var k=(W-2*PAD)/f.w;\n"
	" for(var i=0;i<all.length;i++){var a=all[i];\n"
	"  if(a.lvl>=f.lvl&&a.x>=f.x-0.005&&a.x+a.w<=f.x+f.w+0.01){place(a,PAD+(a.x-f.x)*k,a.w*k);"
	"show(a,1,0);}\n"
	"  else if(a.lvl<f.lvl&&a.x<=f.x+0.005&&a.x+a.w>=f.x+f.w-0.01){place(a,PAD,W-2*PAD);"
	"show(a,1,1);}\n"
	"  else show(a,0,0);}\n"
	" if(searching!==null)search(searching);}\n"
	"function unzoom(){if(!zoomed)return;zoomed=null;unzoomBtn.style.display='none';\n"
	" for(var i=0;i<all.length;i++){place(all[i],all[i].x,all[i].w);show(all[i],1,0);}\n"
	" if(searching!==null)search(searching);}\n"
	"function clearSearch(){searching=null;matchedTxt.textContent=' ';\n"
	" for(var i=0;i<all.length;i++)all[i].r.setAttribute('fill',all[i].fill);}\n"
	"function search(re){if(re===undefined){re=prompt('Search frames (regular expression); "
	"empty clears',searching||'');\n"
	"  if(re===null)return;}\n"
	" if(re===''){clearSearch();return;}\n"
	" var rx;try{rx=new RegExp(re);}catch(e){alert('Not a regular expression: '+e.message);return;}\n"
	" searching=re;var iv=[];\n"
	" for(var i=0;i<all.length;i++){var a=all[i];\n"
	"  if(rx.test(a.name)){a.r.setAttribute('fill','rgb(230,0,230)');iv.push(a);}"
	"else a.r.setAttribute('fill',a.fill);}\n"
	" iv.sort(function(p,q){return p.x-q.x||q.w-p.w;});\n"
	" var n=0,end=-1;for(var j=0;j<iv.length;j++){if(iv[j].x>=end-0.005){n+=iv[j].n;"
	"end=iv[j].x+iv[j].w;}}\n"
	" matchedTxt.textContent='Matched: '+(100*n/TOTAL).toFixed(2)+'% ('+n+' of '+TOTAL+' '+UNIT+')';}\n";

static const char style[] =
	"text{font-family:Verdana,Helvetica,sans-serif;font-size:12px;fill:#000}\n"
	"#title{font-size:17px;text-anchor:middle}\n"
	"#subtitle{text-anchor:middle;fill:#444}\n"
	"#search,#unzoom{cursor:pointer;fill:#235}\n"
	"#matched{text-anchor:end}\n"
	"#frames g{cursor:pointer}\n"
	"#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
	"#frames text{pointer-events:none;font-size:11px}\n";

static void put_js_string(FILE *out, const char *s)
{
	/* only the unit name: keep letters, digits, spaces */
	fputc('\'', out);
	for (; *s; s++)
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == ' ' || *s == '_')
			fputc(*s, out);
	fputc('\'', out);
}

static int write_svg(const struct flame *after, const struct flame *before,
		     const struct flame_svg_opts *opts, FILE *out, struct flame_svg_stats *stats)
{
	struct flame_svg_opts o = opts ? *opts : (struct flame_svg_opts){ 0 };
	struct layout l = { .o = &o, .out = out, .diff = before != NULL };
	struct tree t;
	unsigned int height;
	const char *title, *unit;
	int err;

	err = tree_build(&t, after, before, o.reverse);
	if (err)
		goto out;
	l.t = &t;
	l.width = o.width ? o.width : 1200;
	if (l.width < 100)
		l.width = 100;
	l.fh = o.frame_height ? o.frame_height : 16;
	if (l.fh < 8)
		l.fh = 8;
	l.min_width = o.min_width > 0 ? o.min_width : 0.1;
	l.total[0] = t.nodes[0].total[0];
	l.total[1] = t.nodes[0].total[1];
	unit = o.count_name ? o.count_name : "samples";
	l.scale = l.total[0] ? (double)(l.width - 2 * PAD) / (double)l.total[0] : 0;
	if (l.total[0]) {
		err = budget(&l, o.max_frames ? o.max_frames : 25000);
		if (!err)
			err = walk(&l);
		if (err)
			goto out;
	}
	if (l.min_count && l.min_count * l.scale > l.min_width)
		l.min_width = (double)l.min_count * l.scale; /* what the subtitle says */
	for (size_t i = 1; i < t.nr_nodes; i++)
		l.only_before += !t.nodes[i].total[0];
	l.top = 66;
	l.bottom = l.top + l.depth * l.fh;
	height = l.top + (l.depth + 1) * l.fh + 34;
	title = o.title	    ? o.title
		: l.diff    ? "Differential Flame Graph"
		: o.reverse ? "Icicle Graph (callers)"
			    : "Flame Graph";

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" onload=\"init(evt)\">\n"
		"<!-- perfscope flamegraph: click a frame to zoom, Esc or Reset Zoom to go back, "
		"Ctrl-F or Search to highlight frames by regular expression -->\n"
		"<style type=\"text/css\"><![CDATA[\n%s]]></style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var W=%u,PAD=%d,FH=%u,FONT=%d,REVERSE=%d,TOP=%u,BOTTOM=%u,TOTAL=%llu,UNIT=",
		l.width, height, l.width, height, style, l.width, PAD, l.fh, FONT,
		o.reverse ? 1 : 0, l.top, l.bottom, (unsigned long long)l.total[0]);
	put_js_string(out, unit);
	fprintf(out, ";\n%s]]></script>\n", script);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f6f6f0\"/>\n",
		l.width, height);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", l.width / 2);
	put_escaped(out, title, strlen(title), 0);
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%u\" y=\"44\">", l.width / 2);
	if (o.subtitle) {
		put_escaped(out, o.subtitle, strlen(o.subtitle), 0);
		fputs(" \xe2\x80\x94 ", out);
	}
	fprintf(out, "%llu %s, %zu stacks", (unsigned long long)l.total[0], unit,
		flame__nr_stacks(after));
	if (l.diff)
		fprintf(out, " (before: %llu %s, %zu stacks)", (unsigned long long)l.total[1], unit,
			flame__nr_stacks(before));
	fprintf(out, "; %llu frames drawn, %llu narrower than %.2g px elided",
		(unsigned long long)l.drawn,
		(unsigned long long)(t.nr_nodes - l.drawn - l.only_before), l.min_width);
	if (l.diff)
		fprintf(out, ", %llu only before (no width to draw)",
			(unsigned long long)l.only_before);
	fputs("</text>\n", out);
	if (l.diff)
		fprintf(out,
			"<text x=\"%d\" y=\"60\" fill=\"#444\">red: share grew, blue: "
			"shrank (the deepest color: the largest change, %.2f points)</text>\n",
			PAD, 100 * l.max_delta);
	else
		fprintf(out,
			"<text x=\"%d\" y=\"60\" fill=\"#444\">warm: user, blue: kernel, "
			"grey: unknown</text>\n",
			PAD);
	fprintf(out,
		"<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"display:none\">Reset Zoom</text>\n",
		PAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\">Search</text>\n", l.width - PAD - 50);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", l.width - PAD,
		height - 12);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", PAD, height - 12);
	fputs("<g id=\"frames\">\n", out);
	l.emit = true;
	if (l.total[0]) {
		err = walk(&l);
		if (err)
			goto out;
	}
	fputs("</g>\n</svg>\n", out);
	if (stats) {
		stats->frames = t.nr_nodes;
		stats->drawn = l.drawn;
		stats->elided = t.nr_nodes - l.drawn - l.only_before;
		stats->depth = l.depth;
		stats->min_width = l.min_width;
	}
	if (fflush(out) || ferror(out))
		err = -EIO;
out:
	tree_free(&t);
	return err;
}

int flame_svg__write(const struct flame *f, const struct flame_svg_opts *o, FILE *out,
		     struct flame_svg_stats *stats)
{
	return write_svg(f, NULL, o, out, stats);
}

int flame_svg__write_diff(const struct flame *before, const struct flame *after,
			  const struct flame_svg_opts *o, FILE *out, struct flame_svg_stats *stats)
{
	return write_svg(after, before, o, out, stats);
}

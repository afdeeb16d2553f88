/* pprof: a profile built in memory with every entity kept once, serialized by protobuf-c, gzipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "keymap.h"
#include "pprof.h"
#include "profile.pb-c.h"

/* The entities below start with their key (u64s only, so memcmp compares them); ids are 1..N. */
struct mapping_key {
	uint64_t start, limit, offset, file, build_id;
};
struct mapping {
	struct mapping_key k;
	bool all_named; /* every location in it has a function: pprof need not symbolize it */
};
struct function_key {
	uint64_t name, system_name, file;
};
struct location_key {
	uint64_t mapping_id, addr, function_id; /* function_id 0: unknown */
	int64_t line;
};
struct sample {
	uint64_t hash;
	uint64_t *locs;
	size_t nr_locs;
	uint64_t *labels; /* key, value string indices */
	size_t nr_labels;
	int64_t *values;
};

/* A growing array of fixed-size elements. */
struct vec {
	void *v;
	size_t nr, cap, size;
};

struct pprof {
	struct vec strings; /* char * */
	struct keymap string_map; /* hash -> index + 1, probed on collision */
	struct vec mappings, functions, locations, samples;
	struct keymap mapping_map, function_map, location_map, sample_map; /* hash -> id */
	struct keymap
		frame_map; /* a whole frame's hash -> location id: one lookup per known frame */
	size_t nr_types;
	uint64_t *types; /* type, unit string indices, per sample type */
	uint64_t period_type[2];
	int64_t period;
	int64_t time_ns, duration_ns;
	struct vec comments; /* uint64 string indices */
	uint64_t unknown_module; /* "[unknown]" */
};

static void *vec_push(struct vec *v)
{
	if (v->nr == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *n = realloc(v->v, cap * v->size);

		if (!n)
			return NULL;
		v->v = n;
		v->cap = cap;
	}
	return memset((char *)v->v + v->nr++ * v->size, 0, v->size);
}

static void *vec_at(const struct vec *v, size_t i)
{
	return (char *)v->v + i * v->size;
}

/*
 * A hash of bytes, continuing from h: 8 bytes per step (a multiply and a shift mixing them in),
 * since frames hash names and build-ids of tens of bytes each; collisions are compared anyway.
 */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x9fb21c651e98df25ull;
		h ^= h >> 29;
	}
	for (; len; s++, len--)
		h = (h ^ *s) * 0x100000001b3ull;
	return h ^ (h >> 32);
}

#define HASH_INIT 0xcbf29ce484222325ull
/* the next key to probe when a hash's slot holds another entity */
#define PROBE(h) ((h)*0x9e3779b97f4a7c15ull + 1)

/* The index of s in the string table, added when new; -1 on ENOMEM. */
static int64_t intern_string(struct pprof *p, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = hash_bytes(HASH_INIT, s, len), *idx;
	char **slot;

	for (;;) {
		idx = keymap__find(&p->string_map, h);

		if (!idx)
			break;
		if (!strcmp(*(char **)vec_at(&p->strings, *idx - 1), s))
			return (int64_t)*idx - 1;
		h = PROBE(h);
	}
	slot = vec_push(&p->strings);
	if (!slot)
		return -1;
	*slot = strdup(s);
	idx = *slot ? keymap__insert(&p->string_map, h, NULL) : NULL;
	if (!idx) {
		free(*slot);
		p->strings.nr--;
		return -1;
	}
	*idx = p->strings.nr;
	return (int64_t)p->strings.nr - 1;
}

/*
 * The id of the entity whose key (ksz bytes at the start of each element of v) is key, added
 * zeroed past the key when new (*created says so). 0 on ENOMEM.
 */
static uint64_t intern(struct keymap *m, struct vec *v, const void *key, size_t ksz, bool *created)
{
	uint64_t h = hash_bytes(HASH_INIT, key, ksz);
	uint64_t *id;
	void *e;

	*created = false;
	for (;;) {
		id = keymap__find(m, h);
		if (!id)
			break;
		if (!memcmp(vec_at(v, *id - 1), key, ksz))
			return *id;
		h = PROBE(h);
	}
	e = vec_push(v);
	if (!e)
		return 0;
	memcpy(e, key, ksz);
	id = keymap__insert(m, h, NULL);
	if (!id) {
		v->nr--;
		return 0;
	}
	*id = v->nr;
	*created = true;
	return *id;
}

struct pprof *pprof__new(const struct pprof_value_type *types, size_t nr_types,
			 const struct pprof_value_type *period_type, int64_t period)
{
	struct pprof *p;
	int64_t s;

	if (!types || !nr_types) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->strings.size = sizeof(char *);
	p->mappings.size = sizeof(struct mapping);
	p->functions.size = sizeof(struct function_key);
	p->locations.size = sizeof(struct location_key);
	p->samples.size = sizeof(struct sample);
	p->comments.size = sizeof(uint64_t);
	if (keymap__init(&p->string_map, sizeof(uint64_t), 256) ||
	    keymap__init(&p->mapping_map, sizeof(uint64_t), 16) ||
	    keymap__init(&p->function_map, sizeof(uint64_t), 256) ||
	    keymap__init(&p->location_map, sizeof(uint64_t), 256) ||
	    keymap__init(&p->sample_map, sizeof(uint64_t), 256) ||
	    keymap__init(&p->frame_map, sizeof(uint64_t), 256))
		goto fail;
	/* string_table[0] must be "" */
	if (intern_string(p, "") != 0)
		goto fail;
	p->types = calloc(nr_types, 2 * sizeof(*p->types));
	if (!p->types)
		goto fail;
	p->nr_types = nr_types;
	for (size_t i = 0; i < nr_types; i++) {
		s = intern_string(p, types[i].type ? types[i].type : "");
		p->types[2 * i] = (uint64_t)s;
		s = s < 0 ? s : intern_string(p, types[i].unit ? types[i].unit : "");
		p->types[2 * i + 1] = (uint64_t)s;
		if (s < 0)
			goto fail;
	}
	if (period_type) {
		s = intern_string(p, period_type->type ? period_type->type : "");
		p->period_type[0] = (uint64_t)s;
		s = s < 0 ? s : intern_string(p, period_type->unit ? period_type->unit : "");
		p->period_type[1] = (uint64_t)s;
		if (s < 0)
			goto fail;
	}
	p->period = period;
	s = intern_string(p, "[unknown]");
	if (s < 0)
		goto fail;
	p->unknown_module = (uint64_t)s;
	return p;
fail:
	pprof__delete(p);
	errno = ENOMEM;
	return NULL;
}

void pprof__delete(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->strings.nr; i++)
		free(*(char **)vec_at(&p->strings, i));
	for (size_t i = 0; i < p->samples.nr; i++) {
		struct sample *s = vec_at(&p->samples, i);

		free(s->locs);
		free(s->labels);
		free(s->values);
	}
	free(p->strings.v);
	free(p->mappings.v);
	free(p->functions.v);
	free(p->locations.v);
	free(p->samples.v);
	free(p->comments.v);
	free(p->types);
	keymap__exit(&p->string_map);
	keymap__exit(&p->mapping_map);
	keymap__exit(&p->function_map);
	keymap__exit(&p->location_map);
	keymap__exit(&p->sample_map);
	keymap__exit(&p->frame_map);
	free(p);
}

void pprof__set_time(struct pprof *p, int64_t time_ns, int64_t duration_ns)
{
	p->time_ns = time_ns;
	p->duration_ns = duration_ns;
}

int pprof__add_comment(struct pprof *p, const char *comment)
{
	int64_t s = intern_string(p, comment);
	uint64_t *c;

	if (s < 0)
		return -ENOMEM;
	c = vec_push(&p->comments);
	if (!c)
		return -ENOMEM;
	*c = (uint64_t)s;
	return 0;
}

/* A string index or -1: NULL stays 0 (""). */
static int64_t opt_string(struct pprof *p, const char *s)
{
	return s && *s ? intern_string(p, s) : 0;
}

/* The location id of a frame, its mapping and function added as needed; 0 on ENOMEM. */
static uint64_t frame_location(struct pprof *p, const struct pprof_frame *fr)
{
	struct mapping_key mk = { 0 };
	struct function_key fk = { 0 };
	struct location_key lk = { 0 };
	struct mapping *m;
	int64_t s;
	bool created;

	s = fr->module && *fr->module ? intern_string(p, fr->module) : (int64_t)p->unknown_module;
	if (s < 0)
		return 0;
	mk.file = (uint64_t)s;
	s = opt_string(p, fr->build_id);
	if (s < 0)
		return 0;
	mk.build_id = (uint64_t)s;
	mk.start = fr->map_start;
	mk.limit = fr->map_limit;
	mk.offset = fr->map_offset;
	lk.mapping_id = intern(&p->mapping_map, &p->mappings, &mk, sizeof(mk), &created);
	if (!lk.mapping_id)
		return 0;
	m = vec_at(&p->mappings, lk.mapping_id - 1);
	if (created)
		m->all_named = true;
	if (fr->function && *fr->function) {
		s = intern_string(p, fr->function);
		fk.name = (uint64_t)s;
		s = s < 0 ? s : intern_string(p, fr->system_name ? fr->system_name : fr->function);
		fk.system_name = (uint64_t)s;
		s = s < 0 ? s : opt_string(p, fr->source_file);
		fk.file = (uint64_t)s;
		if (s < 0)
			return 0;
		lk.function_id = intern(&p->function_map, &p->functions, &fk, sizeof(fk), &created);
		if (!lk.function_id)
			return 0;
		lk.line = fr->line;
	} else {
		m->all_named = false;
	}
	lk.addr = fr->addr;
	return intern(&p->location_map, &p->locations, &lk, sizeof(lk), &created);
}

static const char *string_at(const struct pprof *p, uint64_t i)
{
	return *(char **)vec_at(&p->strings, i);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Whether location id loc is what frame fr gives. */
static bool frame_is(const struct pprof *p, uint64_t loc, const struct pprof_frame *fr)
{
	const struct location_key *lk = vec_at(&p->locations, loc - 1);
	const struct mapping *m = vec_at(&p->mappings, lk->mapping_id - 1);
	const struct function_key *fk;
	const char *fn = fr->function && *fr->function ? fr->function : NULL;

	if (lk->addr != fr->addr || m->k.start != fr->map_start || m->k.limit != fr->map_limit ||
	    m->k.offset != fr->map_offset ||
	    strcmp(string_at(p, m->k.file), fr->module && *fr->module ? fr->module : "[unknown]") ||
	    strcmp(string_at(p, m->k.build_id), or_empty(fr->build_id)))
		return false;
	if (!fn)
		return !lk->function_id;
	if (!lk->function_id || lk->line != fr->line)
		return false;
	fk = vec_at(&p->functions, lk->function_id - 1);
	return !strcmp(string_at(p, fk->name), fn) &&
	       !strcmp(string_at(p, fk->system_name), fr->system_name ? fr->system_name : fn) &&
	       !strcmp(string_at(p, fk->file), or_empty(fr->source_file));
}

static uint64_t hash_string(uint64_t h, const char *s)
{
	return s ? hash_bytes(h, s, strlen(s) + 1) : h * 0x100000001b3ull;
}

/* frame_location through the frame cache: a frame seen before costs one hash and one lookup. */
static uint64_t frame_location_cached(struct pprof *p, const struct pprof_frame *fr)
{
	uint64_t num[5] = { fr->addr, fr->map_start, fr->map_limit, fr->map_offset,
			    (uint64_t)fr->line };
	uint64_t h = hash_bytes(HASH_INIT, num, sizeof(num)), loc, *v;

	h = hash_string(h, fr->function);
	h = hash_string(h, fr->module);
	h = hash_string(h, fr->build_id);
	h = hash_string(h, fr->system_name);
	h = hash_string(h, fr->source_file);
	for (;;) {
		v = keymap__find(&p->frame_map, h);
		if (!v)
			break;
		if (frame_is(p, *v, fr))
			return *v;
		h = PROBE(h);
	}
	loc = frame_location(p, fr);
	if (!loc)
		return 0;
	v = keymap__insert(&p->frame_map, h, NULL);
	if (v) /* else only the cache misses it */
		*v = loc;
	return loc;
}

static bool sample_equal(const struct sample *a, const struct sample *b)
{
	return a->nr_locs == b->nr_locs && a->nr_labels == b->nr_labels &&
	       !memcmp(a->locs, b->locs, a->nr_locs * sizeof(*a->locs)) &&
	       (!a->nr_labels ||
		!memcmp(a->labels, b->labels, 2 * a->nr_labels * sizeof(*a->labels)));
}

int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t n,
		      const int64_t *values, const struct pprof_label *labels, size_t nr_labels)
{
	struct sample s = { 0 }, *e;
	uint64_t h, *id;
	int64_t k;
	int err = -ENOMEM;

	if ((!frames && n) || !values || (!labels && nr_labels))
		return -EINVAL;
	s.nr_locs = n;
	s.nr_labels = nr_labels;
	s.locs = malloc((n ? n : 1) * sizeof(*s.locs));
	s.labels = malloc((nr_labels ? nr_labels : 1) * 2 * sizeof(*s.labels));
	if (!s.locs || !s.labels)
		goto out;
	for (size_t i = 0; i < n; i++) {
		s.locs[i] = frame_location_cached(p, &frames[i]);
		if (!s.locs[i])
			goto out;
	}
	for (size_t i = 0; i < nr_labels; i++) {
		k = intern_string(p, labels[i].key ? labels[i].key : "");
		s.labels[2 * i] = (uint64_t)k;
		k = k < 0 ? k : intern_string(p, labels[i].value ? labels[i].value : "");
		s.labels[2 * i + 1] = (uint64_t)k;
		if (k < 0)
			goto out;
	}
	h = hash_bytes(HASH_INIT, s.locs, n * sizeof(*s.locs));
	h = hash_bytes(h, s.labels, 2 * nr_labels * sizeof(*s.labels));
	for (;;) {
		id = keymap__find(&p->sample_map, h);
		if (!id)
			break;
		e = vec_at(&p->samples, *id - 1);
		if (sample_equal(e, &s)) {
			for (size_t i = 0; i < p->nr_types; i++)
				e->values[i] += values[i];
			err = 0;
			goto out;
		}
		h = PROBE(h);
	}
	s.hash = h;
	s.values = malloc(p->nr_types * sizeof(*s.values));
	if (!s.values)
		goto out;
	memcpy(s.values, values, p->nr_types * sizeof(*s.values));
	e = vec_push(&p->samples);
	if (!e)
		goto out;
	id = keymap__insert(&p->sample_map, h, NULL);
	if (!id) {
		p->samples.nr--;
		goto out;
	}
	*id = p->samples.nr;
	*e = s;
	return 0;
out:
	free(s.locs);
	free(s.labels);
	free(s.values);
	return err;
}

size_t pprof__nr_samples(const struct pprof *p)
{
	return p->samples.nr;
}

size_t pprof__nr_locations(const struct pprof *p)
{
	return p->locations.nr;
}

size_t pprof__nr_functions(const struct pprof *p)
{
	return p->functions.nr;
}

size_t pprof__nr_mappings(const struct pprof *p)
{
	return p->mappings.nr;
}

/* The protobuf-c messages of a profile: arrays pointing into p, freed in one place. */
struct msgs {
	Perftools__Profiles__ValueType *types, period_type;
	Perftools__Profiles__ValueType **type_ptrs;
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
};

static void msgs_free(struct msgs *m)
{
	free(m->types);
	free(m->type_ptrs);
	free(m->mappings);
	free(m->mapping_ptrs);
	free(m->functions);
	free(m->function_ptrs);
	free(m->locations);
	free(m->location_ptrs);
	free(m->lines);
	free(m->line_ptrs);
	free(m->samples);
	free(m->sample_ptrs);
	free(m->labels);
	free(m->label_ptrs);
}

#define ALLOC(ptr, n) ((ptr) = calloc((n) ? (n) : 1, sizeof(*(ptr))))

static int build(const struct pprof *p, struct msgs *m, Perftools__Profiles__Profile *pr)
{
	size_t nr_labels = 0, li = 0;

	for (size_t i = 0; i < p->samples.nr; i++)
		nr_labels += ((struct sample *)vec_at(&p->samples, i))->nr_labels;
	if (!ALLOC(m->types, p->nr_types) || !ALLOC(m->type_ptrs, p->nr_types) ||
	    !ALLOC(m->mappings, p->mappings.nr) || !ALLOC(m->mapping_ptrs, p->mappings.nr) ||
	    !ALLOC(m->functions, p->functions.nr) || !ALLOC(m->function_ptrs, p->functions.nr) ||
	    !ALLOC(m->locations, p->locations.nr) || !ALLOC(m->location_ptrs, p->locations.nr) ||
	    !ALLOC(m->lines, p->locations.nr) || !ALLOC(m->line_ptrs, p->locations.nr) ||
	    !ALLOC(m->samples, p->samples.nr) || !ALLOC(m->sample_ptrs, p->samples.nr) ||
	    !ALLOC(m->labels, nr_labels) || !ALLOC(m->label_ptrs, nr_labels))
		return -ENOMEM;

	for (size_t i = 0; i < p->nr_types; i++) {
		perftools__profiles__value_type__init(&m->types[i]);
		m->types[i].type = (int64_t)p->types[2 * i];
		m->types[i].unit = (int64_t)p->types[2 * i + 1];
		m->type_ptrs[i] = &m->types[i];
	}
	pr->n_sample_type = p->nr_types;
	pr->sample_type = m->type_ptrs;
	perftools__profiles__value_type__init(&m->period_type);
	m->period_type.type = (int64_t)p->period_type[0];
	m->period_type.unit = (int64_t)p->period_type[1];
	pr->period_type = &m->period_type;
	pr->period = p->period;
	pr->time_nanos = p->time_ns;
	pr->duration_nanos = p->duration_ns;
	pr->default_sample_type = (int64_t)p->types[2 * (p->nr_types - 1)];

	for (size_t i = 0; i < p->mappings.nr; i++) {
		const struct mapping *src = vec_at(&p->mappings, i);
		Perftools__Profiles__Mapping *d = &m->mappings[i];

		perftools__profiles__mapping__init(d);
		d->id = i + 1;
		d->memory_start = src->k.start;
		d->memory_limit = src->k.limit;
		d->file_offset = src->k.offset;
		d->filename = (int64_t)src->k.file;
		d->build_id = (int64_t)src->k.build_id;
		d->has_functions = src->all_named;
		m->mapping_ptrs[i] = d;
	}
	pr->n_mapping = p->mappings.nr;
	pr->mapping = m->mapping_ptrs;

	for (size_t i = 0; i < p->functions.nr; i++) {
		const struct function_key *src = vec_at(&p->functions, i);
		Perftools__Profiles__Function *d = &m->functions[i];

		perftools__profiles__function__init(d);
		d->id = i + 1;
		d->name = (int64_t)src->name;
		d->system_name = (int64_t)src->system_name;
		d->filename = (int64_t)src->file;
		m->function_ptrs[i] = d;
	}
	pr->n_function = p->functions.nr;
	pr->function = m->function_ptrs;

	for (size_t i = 0; i < p->locations.nr; i++) {
		const struct location_key *src = vec_at(&p->locations, i);
		Perftools__Profiles__Location *d = &m->locations[i];

		perftools__profiles__location__init(d);
		d->id = i + 1;
		d->mapping_id = src->mapping_id;
		d->address = src->addr;
		if (src->function_id) {
			perftools__profiles__line__init(&m->lines[i]);
			m->lines[i].function_id = src->function_id;
			m->lines[i].line = src->line;
			m->line_ptrs[i] = &m->lines[i];
			d->n_line = 1;
			d->line = &m->line_ptrs[i];
		}
		m->location_ptrs[i] = d;
	}
	pr->n_location = p->locations.nr;
	pr->location = m->location_ptrs;

	for (size_t i = 0; i < p->samples.nr; i++) {
		const struct sample *src = vec_at(&p->samples, i);
		Perftools__Profiles__Sample *d = &m->samples[i];

		perftools__profiles__sample__init(d);
		d->n_location_id = src->nr_locs;
		d->location_id = src->locs;
		d->n_value = p->nr_types;
		d->value = src->values;
		d->n_label = src->nr_labels;
		d->label = &m->label_ptrs[li];
		for (size_t j = 0; j < src->nr_labels; j++, li++) {
			perftools__profiles__label__init(&m->labels[li]);
			m->labels[li].key = (int64_t)src->labels[2 * j];
			m->labels[li].str = (int64_t)src->labels[2 * j + 1];
			m->label_ptrs[li] = &m->labels[li];
		}
		m->sample_ptrs[i] = d;
	}
	pr->n_sample = p->samples.nr;
	pr->sample = m->sample_ptrs;

	pr->n_string_table = p->strings.nr;
	pr->string_table = p->strings.v;
	pr->n_comment = p->comments.nr;
	pr->comment = (int64_t *)p->comments.v;
	return 0;
}

/* buf gzipped (a gzip member: what pprof's gzip.NewReader expects) into out. */
static int gzip_to(const uint8_t *buf, size_t len, FILE *out)
{
	unsigned char chunk[1 << 16];
	z_stream z = { 0 };
	int zr, err = 0;

	/* 15 + 16: a gzip header and trailer around the deflate stream */
	/* the fastest level, as Go's runtime/pprof: profiles are written at the end of a run */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	do {
		/* avail_in is 32 bits: feed a large profile in slices */
		size_t left = len - (size_t)(z.next_in - buf);
		uInt feed = left > (1u << 30) ? (1u << 30) : (uInt)left;

		z.avail_in = feed;
		do {
			z.next_out = chunk;
			z.avail_out = sizeof(chunk);
			zr = deflate(&z, feed == left ? Z_FINISH : Z_NO_FLUSH);
			if (zr == Z_STREAM_ERROR) {
				err = -EINVAL;
				goto out;
			}
			if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
			    sizeof(chunk) - z.avail_out) {
				err = -EIO;
				goto out;
			}
		} while (z.avail_out == 0);
	} while (zr != Z_STREAM_END);
out:
	deflateEnd(&z);
	return err;
}

int pprof__write(const struct pprof *p, FILE *out)
{
	Perftools__Profiles__Profile pr;
	struct msgs m = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	int err;

	perftools__profiles__profile__init(&pr);
	err = build(p, &m, &pr);
	if (err)
		goto out;
	len = perftools__profiles__profile__get_packed_size(&pr);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&pr, buf);
	err = gzip_to(buf, len, out);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
out:
	free(buf);
	msgs_free(&m);
	return err;
}

int pprof__write_path(const struct pprof *p, const char *path)
{
	FILE *out = fopen(path, "we");
	int err;

	if (!out)
		return -errno;
	err = pprof__write(p, out);
	if (fclose(out) && !err)
		err = -errno;
	return err;
}

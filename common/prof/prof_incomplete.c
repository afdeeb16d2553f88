/* prof_incomplete: a summary's own note, inside its results, that events were lost. */
#include <stdio.h>

#include <perfscope/evlist.h>
#include <perfscope/evsel.h>
#include <perfscope/kernel.h>

#include "prof_internal.h"
#include "session.h"

/*
 * A table built from part of the events looks as complete as one built from all of them; a
 * warning on stderr is lost with the terminal's scrollback or a 2>/dev/null. So the result says
 * it: a footer line under the text table, an "incomplete" object in JSON, with the share of the
 * events that never arrived (lost in the rings, or counted by the kernel and dropped: kdrop.h,
 * known at the end of the run only).
 */
/* The event missing the largest share of its own (the run's; with several events only). */
struct worst {
	const char *name;
	uint64_t seen, missing;
};

static bool worst_event(struct prof *p, struct worst *w)
{
	struct psc_evsel *evsel;
	int i, nr = 0;

	*w = (struct worst){ 0 };
	psc_evlist__for_each(p->evlist, i, evsel)
	{
		const struct prof_event *ev = psc_evsel__priv(evsel);
		uint64_t seen = session__evsel_samples(p->session, i);
		uint64_t missing =
			session__evsel_lost(p->session, i) + session__evsel_kdropped(p->session, i);

		if (session_is_sideband(evsel) || (!seen && !missing))
			continue;
		nr++;
		/* missing / (seen + missing) larger than w's, compared without division */
		if (missing &&
		    (!w->missing || (unsigned __int128)missing * (w->seen + w->missing) >
					    (unsigned __int128)w->missing * (seen + missing))) {
			w->name = ev ? ev->name : psc_evsel__name(evsel);
			w->seen = seen;
			w->missing = missing;
		}
	}
	return nr > 1 && w->missing;
}

/*
 * A stream's events lost and dropped by the kernel, the side-band records' own left out: its
 * objects and these then add up to the events that happened. A kernel without per-event lost
 * counts (before 6.0) cannot tell them apart (its LOST records carry the id of whichever event
 * wrote next, often the side-band's): all its losses are counted, never fewer.
 */
static void events_missing(struct prof *p, const struct session_stats *st, uint64_t *lost,
			   uint64_t *kdropped)
{
	bool exact = psc_kernel__has_format_lost();
	struct psc_evsel *evsel;
	int i;

	*lost = exact ? 0 : st->lost + st->lost_records * !st->lost;
	*kdropped = 0;
	psc_evlist__for_each(p->evlist, i, evsel)
	{
		if (session_is_sideband(evsel))
			continue;
		if (exact)
			*lost += session__evsel_lost(p->session, i);
		*kdropped += session__evsel_kdropped(p->session, i);
	}
}

/* A share of missing events as a whole percent; a few of millions is "<1%", never "0%". */
static const char *percent_text(double share, char *buf, size_t len)
{
	if (share * 100 < 0.5)
		snprintf(buf, len, "<1%%");
	else
		snprintf(buf, len, "%.0f%%", share * 100);
	return buf;
}

void prof_incomplete__note(struct prof *p, struct prof_incomplete *at, bool final)
{
	char pct[8];
	struct worst w;
	bool has_worst;
	struct session_stats st;
	uint64_t lost, kdropped, samples, missing, out_dropped, filtered = 0;
	double share;
	/* a stream of events (trace: no report of its own) */
	bool stream = !(p->decl->needs & PROF_SUMMARY) && !p->decl->report;

	/* a summary's tables get the note; a stream, at its end and in JSON (its text: stderr) */
	if (!(p->decl->needs & PROF_SUMMARY) && !(stream && final && p->json_fmt))
		return;
	if (!(p->decl->needs & PROF_RINGS) || !p->session || out__error(p->out))
		return;
	session__stats(p->session, &st);
	lost = st.lost + st.lost_records * !st.lost;
	if (st.samples < at->samples || lost < at->lost) /* a new session (-r): counted anew */
		*at = (struct prof_incomplete){ 0 };
	kdropped = final ? st.kernel_dropped : 0;
	/* an interval tells its own losses; the end, the run's */
	samples = st.samples - (final ? 0 : at->samples);
	lost -= final ? 0 : at->lost;
	at->samples = st.samples;
	at->lost = st.lost + st.lost_records * !st.lost;
	/*
	 * A stream's events dropped on the way out (the output queue full, or not written at the
	 * end) are missing from it; those its filters (a user-space /filter/, --sampling-limit)
	 * dropped on purpose are not, but are said so that the counts add up.
	 */
	out_dropped = stream ? p->out_dropped + p->out_unwritten : 0;
	if (stream) {
		events_missing(p, &st, &lost, &kdropped);
		filtered = st.samples > p->nr_samples ? st.samples - p->nr_samples : 0;
	}
	missing = lost + kdropped + out_dropped;
	if (!missing)
		return;
	/* of what happened: seen + lost + kernel_dropped (the output's drops were seen) */
	share = (double)missing / (double)(samples + lost + kdropped);
	has_worst = final && worst_event(p, &w);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		json__key(&p->json, "incomplete");
		json__obj(&p->json);
		json__key(&p->json, "lost");
		json__u64(&p->json, lost);
		json__key(&p->json, "kernel_dropped");
		json__u64(&p->json, kdropped);
		if (stream) {
			json__key(&p->json, "output_dropped");
			json__u64(&p->json, out_dropped);
			json__key(&p->json, "filtered");
			json__u64(&p->json, filtered);
		}
		json__key(&p->json, "seen");
		json__u64(&p->json, samples);
		json__key(&p->json, "share");
		json__dbl(&p->json, share);
		json__key(&p->json, "final");
		json__bool(&p->json, final);
		if (has_worst) {
			json__key(&p->json, "worst");
			json__obj(&p->json);
			json__key(&p->json, "event");
			json__str(&p->json, w.name);
			json__key(&p->json, "missing");
			json__u64(&p->json, w.missing);
			json__key(&p->json, "of");
			json__u64(&p->json, w.seen + w.missing);
			json__end(&p->json);
		}
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out, "incomplete: %s of the %s events missing (%llu lost",
		    percent_text(share, pct, sizeof(pct)), final ? "run's" : "interval's",
		    (unsigned long long)lost);
	if (final)
		out__printf(p->out, ", %llu dropped by the kernel", (unsigned long long)kdropped);
	out__printf(p->out, "): the results above count %llu of %llu", (unsigned long long)samples,
		    (unsigned long long)(samples + missing));
	if (has_worst)
		out__printf(p->out, "; %s: %s missing (%llu of %llu)", w.name,
			    percent_text((double)w.missing / (double)(w.seen + w.missing), pct,
					 sizeof(pct)),
			    (unsigned long long)w.missing,
			    (unsigned long long)(w.seen + w.missing));
	out__putc(p->out, '\n');
}

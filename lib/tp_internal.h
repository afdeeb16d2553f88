/* Layout of struct psc_tp_format, shared by the tracepoint sources (tp.c, tp_filter.c) only. */
#ifndef PERFSCOPE_TP_INTERNAL_H
#define PERFSCOPE_TP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <perfscope/tp.h>

struct psc_tp_format {
	struct tep_handle *tep; /* one handle per format: formats are independent objects */
	struct tep_event *event;
	char *sys, *name;
	struct psc_tp_field *fields; /* common_* first, in record order */
	int nr_fields;
	uint32_t min_size; /* end of the last fixed field: shorter payloads are malformed */
	const struct psc_tp_field *common_type;
	struct trace_seq seq; /* print scratch */
	bool seq_ready;
	void *scratch; /* padded copy of the payload handed to libtraceevent */
	size_t scratch_cap;
	psc_tp_ksym_resolver_fn ksym_fn; /* kernel functions in the print format, or NULL */
	void *ksym_priv;
};

#endif

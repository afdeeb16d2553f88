/* perfscope kmemprof: perf-prof's name for multi-trace --impl kmemprof. */
#include <string.h>

#include "multi_trace.h"

static int kmemprof_check(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	if (mt->impl_text && strcmp(mt->impl_text, "kmemprof"))
		return prof_usage(p,
				  "kmemprof is multi-trace --impl kmemprof: --impl %s is "
				  "multi-trace's (perfscope multi-trace --impl %s)",
				  mt->impl_text, mt->impl_text);
	mt->impl_text = "kmemprof";
	return mt_check(p, priv);
}

const struct profiler profiler_kmemprof = {
	.name = "kmemprof",
	.summary = "memory allocated and freed by allocation stack, from alloc and free events",
	.usage = "-e ALLOC[,ALLOC...] -e FREE[,FREE...] [-k EXPR] [-i MS] [-C CPUS]\n"
		 "                       [-p PID | -t TID] [--format text|json] [-o FILE] "
		 "[-- COMMAND ARGS...]",
	.description =
		"perf-prof's kmemprof: multi-trace --impl kmemprof under the name users type. The\n"
		"first -e group allocates, the second frees; an allocation and its free share a key\n"
		"(key=EXPR on the event, or -k EXPR: ptr for kmalloc/kfree, pfn for pages). Each\n"
		"allocation's bytes come from size=EXPR (default bytes_alloc, else bytes_req). The\n"
		"report gives the bytes and objects allocated, freed and not freed, by allocation\n"
		"stack (stack on the alloc event), most bytes first. Every multi-trace option applies\n"
		"(see perfscope help multi-trace).",
	.events_help = "the allocations, then (-e again) the frees; ATTRs: size=EXPR, key=EXPR,\n"
		       "stack, alias=NAME",
	.notes =
		"On this kernel pages are named by pfn (kmem:mm_page_alloc has no page field):\n"
		"key=pfn where perf-prof's line says key=page.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples =
		"kmemprof -e kmem:kmalloc//size=bytes_alloc/stack/ -e kmem:kfree -m 128 --order "
		"-k ptr --duration 1\n"
		"kmemprof -e kmem:kmalloc//size=bytes_alloc/stack/,kmem:kmem_cache_alloc//"
		"size=bytes_alloc/stack/ -e kmem:kfree,kmem:kmem_cache_free --order -k ptr --duration 1\n"
		"kmemprof -e 'kmem:mm_page_alloc//size=4096<<order/key=pfn/stack/' -e "
		"kmem:mm_page_free//key=pfn/stack/ -m 256 --order --duration 1\n"
		"kmemprof -e kmem:kmalloc//stack/ -e kmem:kfree -k ptr --format json --duration 1",
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.conformance_args = "-e kmem:kmalloc//stack/ -e kmem:kfree -k ptr -i 200",
	.check = kmemprof_check,
	MT_PROFILER_ENGINE,
};

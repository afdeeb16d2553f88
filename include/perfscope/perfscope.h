/* libperfscope umbrella header: include this to get the whole SDK. */
#ifndef PERFSCOPE_PERFSCOPE_H
#define PERFSCOPE_PERFSCOPE_H

#include <perfscope/common.h>
#include <perfscope/cpumap.h>
#include <perfscope/threadmap.h>
#include <perfscope/parse.h>
#include <perfscope/suggest.h>
#include <perfscope/tracefs.h>
#include <perfscope/probe.h>
#include <perfscope/evsel.h>
#include <perfscope/evlist.h>
#include <perfscope/ring.h>
#include <perfscope/record.h>
#include <perfscope/measure.h>
#include <perfscope/cgroup.h>
#include <perfscope/kernel.h>
#include <perfscope/bpf.h>

#endif

/* Tracepoint format files copied from a 6.18 kernel (/sys/kernel/tracing/events/SYS/NAME/format),
 * for test_tp.c. */
#ifndef TP_FORMATS_H
#define TP_FORMATS_H

/* "format:" and the fields every event starts with, up to the blank line that ends them */
#define TP_FORMAT_COMMON_FIELDS                                                        \
	"format:\n"                                                                    \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"                     \
	"\n"

static const char fmt_sched_switch[] =
	"name: sched_switch\n"
	"ID: 372\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char fmt_sched_wakeup[] =
	"name: sched_wakeup\n"
	"ID: 374\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n";

static const char fmt_sched_process_exec[] =
	"name: sched_process_exec\n"
	"ID: 365\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, REC->old_pid\n";

static const char fmt_kmalloc[] =
	"name: kmalloc\n"
	"ID: 658\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:const void * ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t bytes_req;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t bytes_alloc;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:unsigned long gfp_flags;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\tfield:int node;\toffset:48;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"call_site=%pS ptr=%p bytes_req=%zu bytes_alloc=%zu gfp_flags=%s node=%d accounted=%s\", (void *)REC->call_site, REC->ptr, REC->bytes_req, REC->bytes_alloc, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, \"|\", {( unsigned long)(((((((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gfp_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))) | (( gfp_t)((((1UL))) << (10)))), \"GFP_TRANSHUGE\"}, {( unsigned long)((((((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)) | (( gfp_t)((((1UL))) << (18))) | (( gfp_t)((((1UL))) << (19))) | (( gfp_t)((((1UL))) << (13)))) & ~(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))), \"GFP_TRANSHUGE_LIGHT\"}, {( unsigned long)((((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))) | (( gfp_t)((((1UL))) << (3))) | (( gfp_t)0)), \"GFP_HIGHUSER_MOVABLE\"}, {( unsigned long)(((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))) | (( gfp_t)((((1UL))) << (1)))), \"GFP_HIGHUSER\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7))) | (( gfp_t)((((1UL))) << (20)))), \"GFP_USER\"}, {( unsigned long)(((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))) | (( gfp_t)((((1UL))) << (22)))), \"GFP_KERNEL_ACCOUNT\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6))) | (( gfp_t)((((1UL))) << (7)))), \"GFP_KERNEL\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))) | (( gfp_t)((((1UL))) << (6)))), \"GFP_NOFS\"}, {( unsigned long)((( gfp_t)((((1UL))) << (5)))|(( gfp_t)((((1UL))) << (11)))), \"GFP_ATOMIC\"}, {( unsigned long)((( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11))))), \"GFP_NOIO\"}, {( unsigned long)((( gfp_t)((((1UL))) << (11))) | (( gfp_t)((((1UL))) << (13)))), \"GFP_NOWAIT\"}, {( unsigned long)(( gfp_t)((((1UL))) << (0))), \"GFP_DMA\"}, {( unsigned long)(( gfp_t)((((1UL))) << (2))), \"GFP_DMA32\"}, {( unsigned long)(( gfp_t)(((((1UL))) << (10))|((((1UL))) << (11)))), \"__GFP_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (0))), \"__GFP_DMA\"}, {( unsigned long)(( gfp_t)((((1UL))) << (1))), \"__GFP_HIGHMEM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (2))), \"__GFP_DMA32\"}, {( unsigned long)(( gfp_t)((((1UL))) << (3))), \"__GFP_MOVABLE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (4))), \"__GFP_RECLAIMABLE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (5))), \"__GFP_HIGH\"}, {( unsigned long)(( gfp_t)((((1UL))) << (6))), \"__GFP_IO\"}, {( unsigned long)(( gfp_t)((((1UL))) << (7))), \"__GFP_FS\"}, {( unsigned long)(( gfp_t)((((1UL))) << (8))), \"__GFP_ZERO\"}, {( unsigned long)(( gfp_t)((((1UL))) << (10))), \"__GFP_DIRECT_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (11))), \"__GFP_KSWAPD_RECLAIM\"}, {( unsigned long)(( gfp_t)((((1UL))) << (12))), \"__GFP_WRITE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (13))), \"__GFP_NOWARN\"}, {( unsigned long)(( gfp_t)((((1UL))) << (14))), \"__GFP_RETRY_MAYFAIL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (15))), \"__GFP_NOFAIL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (16))), \"__GFP_NORETRY\"}, {( unsigned long)(( gfp_t)((((1UL))) << (17))), \"__GFP_MEMALLOC\"}, {( unsigned long)(( gfp_t)((((1UL))) << (18))), \"__GFP_COMP\"}, {( unsigned long)(( gfp_t)((((1UL))) << (19))), \"__GFP_NOMEMALLOC\"}, {( unsigned long)(( gfp_t)((((1UL))) << (20))), \"__GFP_HARDWALL\"}, {( unsigned long)(( gfp_t)((((1UL))) << (21))), \"__GFP_THISNODE\"}, {( unsigned long)(( gfp_t)((((1UL))) << (22))), \"__GFP_ACCOUNT\"}, {( unsigned long)(( gfp_t)((((1UL))) << (23))), \"__GFP_ZEROTAGS\"}, {( unsigned long)(( gfp_t)((((1UL))) << (24))), \"__GFP_NO_OBJ_EXT\"}, { 0, ((void *)0) } ) : \"none\", REC->node, (1 && (REC->gfp_flags & ( unsigned long)(( gfp_t)((((1UL))) << (22))))) ? \"true\" : \"false\"\n";

static const char fmt_dma_map_sg[] =
	"name: dma_map_sg\n"
	"ID: 431\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:__data_loc char[] device;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:int full_nents;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:int full_ents;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:bool truncated;\toffset:20;\tsize:1;\tsigned:0;\n"
	"\tfield:__data_loc u64[] phys_addrs;\toffset:24;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc u64[] dma_addrs;\toffset:28;\tsize:4;\tsigned:0;\n"
	"\tfield:__data_loc unsigned int[] lengths;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:enum dma_data_direction dir;\toffset:36;\tsize:4;\tsigned:0;\n"
	"\tfield:unsigned long attrs;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"%s dir=%s nents=%d/%d ents=%d/%d%s dma_addrs=%s sizes=%s phys_addrs=%s attrs=%s\", __get_str(device), __print_symbolic(REC->dir, { 0, \"BIDIRECTIONAL\" }, { 1, \"TO_DEVICE\" }, { 2, \"FROM_DEVICE\" }, { 3, \"NONE\" }), ({ int __UNIQUE_ID_x_921 = (REC->full_nents); int __UNIQUE_ID_y_922 = (128); ((__UNIQUE_ID_x_921) < (__UNIQUE_ID_y_922) ? (__UNIQUE_ID_x_921) : (__UNIQUE_ID_y_922)); }), REC->full_nents, ({ int __UNIQUE_ID_x_923 = (REC->full_ents); int __UNIQUE_ID_y_924 = (128); ((__UNIQUE_ID_x_923) < (__UNIQUE_ID_y_924) ? (__UNIQUE_ID_x_923) : (__UNIQUE_ID_y_924)); }), REC->full_ents, REC->truncated ? \" [TRUNCATED]\" : \"\", __print_array(__get_dynamic_array(dma_addrs), __get_dynamic_array_len(dma_addrs) / sizeof(u64), sizeof(u64)), __print_array(__get_dynamic_array(lengths), __get_dynamic_array_len(lengths) / sizeof(unsigned int), sizeof(unsigned int)), __print_array(__get_dynamic_array(phys_addrs), __get_dynamic_array_len(phys_addrs) / sizeof(u64), sizeof(u64)), __print_flags(REC->attrs, \"|\", { (1UL << 1), \"WEAK_ORDERING\" }, { (1UL << 2), \"WRITE_COMBINE\" }, { (1UL << 4), \"NO_KERNEL_MAPPING\" }, { (1UL << 5), \"SKIP_CPU_SYNC\" }, { (1UL << 6), \"FORCE_CONTIGUOUS\" }, { (1UL << 7), \"ALLOC_SINGLE_PAGES\" }, { (1UL << 8), \"NO_WARN\" }, { (1UL << 9), \"PRIVILEGED\" }, { (1UL << 10), \"MMIO\" }, { (1UL << 11), \"CACHE_CLEAN\" })\n";

static const char fmt_sys_enter_openat[] =
	"name: sys_enter_openat\n"
	"ID: 782\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), ((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n";

/* Fixed u8 arrays (addresses) that libtraceevent would call strings, and %pI4/%pI6c. */
static const char fmt_inet_sock_set_state[] =
	"name: inet_sock_set_state\n"
	"ID: 2287\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:const void * skaddr;\toffset:8;\tsize:8;\tsigned:0;\n"
	"\tfield:int oldstate;\toffset:16;\tsize:4;\tsigned:1;\n"
	"\tfield:int newstate;\toffset:20;\tsize:4;\tsigned:1;\n"
	"\tfield:__u16 sport;\toffset:24;\tsize:2;\tsigned:0;\n"
	"\tfield:__u16 dport;\toffset:26;\tsize:2;\tsigned:0;\n"
	"\tfield:__u16 family;\toffset:28;\tsize:2;\tsigned:0;\n"
	"\tfield:__u16 protocol;\toffset:30;\tsize:2;\tsigned:0;\n"
	"\tfield:__u8 saddr[4];\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:__u8 daddr[4];\toffset:36;\tsize:4;\tsigned:0;\n"
	"\tfield:__u8 saddr_v6[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:__u8 daddr_v6[16];\toffset:56;\tsize:16;\tsigned:0;\n"
	"\n"
	"print fmt: \"family=%s protocol=%s sport=%hu dport=%hu saddr=%pI4 daddr=%pI4 saddrv6=%pI6c daddrv6=%pI6c oldstate=%s newstate=%s\", __print_symbolic(REC->family, { 2, \"AF_INET\" }, { 10, \"AF_INET6\" }), __print_symbolic(REC->protocol, { 6, \"IPPROTO_TCP\" }, { 132, \"IPPROTO_SCTP\" }, { 262, \"IPPROTO_MPTCP\" }), REC->sport, REC->dport, REC->saddr, REC->daddr, REC->saddr_v6, REC->daddr_v6, __print_symbolic(REC->oldstate, { 1, \"TCP_ESTABLISHED\" }, { 2, \"TCP_SYN_SENT\" }, { 3, \"TCP_SYN_RECV\" }, { 4, \"TCP_FIN_WAIT1\" }, { 5, \"TCP_FIN_WAIT2\" }, { 6, \"TCP_TIME_WAIT\" }, { 7, \"TCP_CLOSE\" }, { 8, \"TCP_CLOSE_WAIT\" }, { 9, \"TCP_LAST_ACK\" }, { 10, \"TCP_LISTEN\" }, { 11, \"TCP_CLOSING\" }, { 12, \"TCP_NEW_SYN_RECV\" }), __print_symbolic(REC->newstate, { 1, \"TCP_ESTABLISHED\" }, { 2, \"TCP_SYN_SENT\" }, { 3, \"TCP_SYN_RECV\" }, { 4, \"TCP_FIN_WAIT1\" }, { 5, \"TCP_FIN_WAIT2\" }, { 6, \"TCP_TIME_WAIT\" }, { 7, \"TCP_CLOSE\" }, { 8, \"TCP_CLOSE_WAIT\" }, { 9, \"TCP_LAST_ACK\" }, { 10, \"TCP_LISTEN\" }, { 11, \"TCP_CLOSING\" }, { 12, \"TCP_NEW_SYN_RECV\" })\n";

/* raw_syscalls:sys_enter: a fixed array of unsigned long. */
static const char fmt_raw_sys_enter[] =
	"name: sys_enter\n"
	"ID: 443\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n"
	"\n"
	"print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n";

/*
 * Kernels before 6.2 (built with a signed char) say signed:1 for char arrays; 6.2 and later
 * (-funsigned-char) say signed:0. sched_switch and sched_wakeup as a 5.10 kernel writes them.
 */
static const char fmt_sched_switch_signed_char[] =
	"name: sched_switch\n"
	"ID: 316\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1), \"|\", { 0x0001, \"S\" }, { 0x0002, \"D\" }, { 0x0004, \"T\" }, { 0x0008, \"t\" }, { 0x0010, \"X\" }, { 0x0020, \"Z\" }, { 0x0040, \"P\" }, { 0x0080, \"I\" }) : \"R\", REC->prev_state & (((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

static const char fmt_sched_wakeup_signed_char[] =
	"name: sched_wakeup\n"
	"ID: 318\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int success;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:36;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, REC->target_cpu\n";

#endif

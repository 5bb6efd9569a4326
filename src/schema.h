/* The --json document's names, each spelled once: its members' keys (SK_)
 * and the dotted paths that readers name (SCHEMA_PATHS: JP_ constants,
 * built from the keys with SP_). The writer (report_json.c), the row
 * extractor (stats_row.c) and the merger (stats_merge.c) all name members
 * by these, and tests/test_schema.c checks that the writer writes every
 * path of SCHEMA_PATHS, the only paths the readers can name.
 *
 * The layout of the document is man/tbench.1's (--json FILE); its version is
 * SCHEMA_VERSION, written first as "schema_version". A reader takes a
 * document without one (written before it was added) as version 1, and
 * refuses one of a later version, whose meaning it cannot know. */
#ifndef TBENCH_SCHEMA_H
#define TBENCH_SCHEMA_H

#include <stdio.h>

#include "histogram.h"
#include "json.h"
#include "json_build.h"
#include "util.h"

/* Raised when a member changes meaning or goes; not for a member added. */
#define SCHEMA_VERSION 1

/* ---- the top level ---------------------------------------------------- */
#define SK_SCHEMA_VERSION "schema_version"
#define SK_TBENCH_VERSION "tbench_version"
#define SK_SETTINGS "settings"
#define SK_NETNS "netns"
#define SK_SOCKET "socket"
#define SK_RESULT "result"
#define SK_COST "cost"
#define SK_NOISE "noise"
#define SK_BACKEND_COUNTERS "backend_counters"
#define SK_OPERATIONS "operations"  /* also cost.operations: how many */
#define SK_CLIENTS "clients"        /* also settings.clients, cost.per_operation.clients */
#define SK_HOSTS "hosts"            /* the merger's: each host's own figures */

/* ---- settings --------------------------------------------------------- */
#define SK_BACKEND "backend"
#define SK_MODEL "model"
#define SK_PROCS "procs"
#define SK_CLIENTS_PER_PROCESS "clients_per_process"
#define SK_COPY_REPLIES "copy_replies"
#define SK_LOADFILE "loadfile"
#define SK_LOADFILE_OPS "loadfile_ops"
#define SK_LOADFILE_PASS_BYTES "loadfile_pass_bytes"
#define SK_TIMELIMIT_S "timelimit_s"
#define SK_WARMUP_S "warmup_s"
#define SK_TARGET_RATE_MB_S "target_rate_mb_s"
#define SK_TIMEOUT_S "timeout_s"
#define SK_SPIN_US "spin_us"
#define SK_ZEROCOPY_THRESHOLD "zerocopy_threshold"
#define SK_UNIX_SOCKET "unix_socket"
#define SK_URING "uring"
#define SK_SQPOLL "sqpoll"
#define SK_FILES "files"
#define SK_BUFFERS "buffers"
#define SK_ZC_MIN "zc_min"
#define SK_MULTISHOT "multishot"
#define SK_RING_FLAGS "ring_flags"
#define SK_REGISTERED_RING "registered_ring"
#define SK_SERVER_SHAPE "server_shape"
#define SK_LOOPS "loops"
#define SK_PROCESSES "processes"
#define SK_RUN_ONCE "run_once"
#define SK_SERVER "server"
#define SK_CLOCK "clock"
#define SK_DRIVER_PRIORITY "driver_priority"  /* fifo, nice or normal */
#define SK_SOURCE "source"
#define SK_WHY "why"
#define SK_CALIBRATION_ERROR_PPM "calibration_error_ppm"
#define SK_CHECKED_AFTER_S "checked_after_s"
#define SK_CPUS "cpus"              /* also noise.cpu_freq.cpus */
#define SK_SERVER_CPUS "server_cpus"
#define SK_FAMILY "family"          /* also socket.family */
#define SK_START_AT "start_at"
#define SK_INJECT_NS "inject_ns"    /* --inject-ns, a calibration aid; 0: none */
#define SK_COMMAND "command"

/* ---- netns and socket ------------------------------------------------- */
#define SK_PRIVATE "private"
#define SK_USER_NAMESPACE "user_namespace"
#define SK_DEVICE "device"          /* also cost.device */
#define SK_TSO "tso"
#define SK_GSO "gso"
#define SK_GRO "gro"
#define SK_MTU "mtu"
#define SK_SYSCTLS "sysctls"      /* --sysctl: [{ name, asked, read }] */
#define SK_ASKED "asked"
#define SK_READ "read"
#define SK_CC "cc"
#define SK_NODELAY "nodelay"
#define SK_SNDBUF "sndbuf"
#define SK_RCVBUF "rcvbuf"

/* ---- result ----------------------------------------------------------- */
#define SK_STATUS "status"
#define SK_PARTIAL "partial"
#define SK_ERROR "error"
#define SK_MB_PER_SEC "mb_per_sec"
#define SK_OPS_PER_SEC "ops_per_sec"
#define SK_EXECUTE_S "execute_s"
#define SK_TOTAL_S "total_s"
#define SK_SETUP_S "setup_s"     /* the clients' start, up to the release */
#define SK_PAYLOAD_BYTES "payload_bytes"
#define SK_PAYLOAD_BYTES_ALL_PHASES "payload_bytes_all_phases"
#define SK_OPS "ops"
#define SK_MAX_LATENCY_MS "max_latency_ms"
#define SK_LESS_THAN_A_PASS "less_than_a_pass"
#define SK_LATENCY "latency"
#define SK_CPU "cpu"
#define SK_USER_S "user_s"
#define SK_SYSTEM_S "system_s"
#define SK_CLIENTS_USER_S "clients_user_s"
#define SK_CLIENTS_SYSTEM_S "clients_system_s"
#define SK_OTHERS_USER_S "others_user_s"
#define SK_OTHERS_SYSTEM_S "others_system_s"
#define SK_CPU_US_PER_MB "cpu_us_per_mb"

/* A latency object (result.latency, each of operations[]). */
#define SK_COUNT "count"
#define SK_AVG_MS "avg_ms"
#define SK_P50_MS "p50_ms"
#define SK_P99_MS "p99_ms"
#define SK_P999_MS "p999_ms"
#define SK_MAX_MS "max_ms"
#define SK_HISTOGRAM "histogram"
#define SK_SUM_NS "sum_ns"
#define SK_MAX_NS "max_ns"
#define SK_BUCKETS "buckets"

/* ---- cost ------------------------------------------------------------- */
#define SK_PER_OPERATION "per_operation"
#define SK_SERVERS "servers"
#define SK_HARNESS "harness"        /* cost.per_operation.harness: the driver's thread */
#define SK_TASKS "tasks"
#define SK_CPU_USER_US "cpu_user_us"
#define SK_CPU_SYSTEM_US "cpu_system_us"
#define SK_VOLUNTARY_SWITCHES "voluntary_switches"
#define SK_INVOLUNTARY_SWITCHES "involuntary_switches"
#define SK_PAYLOAD_BYTES_PER_SEGMENT "payload_bytes_per_segment"
#define SK_SEGMENTS_OUT "segments_out"
#define SK_COUNTED_BY "counted_by"
#define SK_CPU_USER_SYSTEM "cpu_user_system"
#define SK_NOT_AVAILABLE "not_available"

/* ---- noise ------------------------------------------------------------ */
#define SK_WALL_S "wall_s"
#define SK_ONLINE_CPUS "online_cpus"
#define SK_STEAL_PCT "steal_pct"
#define SK_OTHER_CPU_PCT "other_cpu_pct"
#define SK_OUTSIDE_RUNNABLE "outside_runnable"
#define SK_LOADAVG_START "loadavg_start"
#define SK_LOADAVG_END "loadavg_end"
#define SK_CPU_MIGRATIONS "cpu_migrations"
#define SK_CPU_FREQ "cpu_freq"
#define SK_EXPOSED "exposed"
#define SK_START_MHZ "start_mhz"
#define SK_END_MHZ "end_mhz"
#define SK_CHANGED_CPUS "changed_cpus"
#define SK_LONGEST_STALL_S "longest_stall_s"
#define SK_OVERRUN_S "overrun_s"
#define SK_THRESHOLDS "thresholds"
#define SK_STALL_S "stall_s"
#define SK_MIN_JUDGED_S "min_judged_s"
#define SK_DISTURBED "disturbed"
#define SK_REASONS "reasons"
#define SK_HOSTS_JUDGED "hosts_judged"        /* the merger's */
#define SK_HOSTS_DISTURBED "hosts_disturbed"  /* the merger's */

/* ---- trace (--trace) ---------------------------------------------------- */
#define SK_TRACE "trace"
#define SK_TOLERANCE_PCT "tolerance_pct"
#define SK_RECONCILED_RATIO "reconciled_ratio"
#define SK_RECONCILED "reconciled"
#define SK_PROBE_CPU_US "probe_cpu_us"   /* the BPF programs' own run time per operation */
#define SK_ON_CPU_US "on_cpu_us"
#define SK_USER_US "user_us"
#define SK_SYSCALL_US "syscall_us"
#define SK_RUN_QUEUE_US "run_queue_us"
#define SK_BLOCKED_US "blocked_us"
#define SK_WAKEUPS "wakeups"
#define SK_WAKEUPS_CROSS_CPU "wakeups_cross_cpu"
#define SK_PREEMPTED "preempted"
#define SK_SWITCHES "switches"
#define SK_SOFTIRQ_US "softirq_us"   /* also trace.per_operation.softirq_us: every CPU's */
#define SK_STARTED "started"
#define SK_ENDED "ended"
#define SK_NR "nr"
#define SK_US "us"
#define SK_WAKEUP_LATENCY "wakeup_latency"
#define SK_NET_RX "net_rx"
#define SK_NET_TX "net_tx"
#define SK_OTHER "other"
#define SK_SYSCALL_GROUPS_US "syscall_groups_us"
#define SK_SYSCALLS_FOLLOWED "syscalls_followed"   /* --trace-syscalls: counts and exact times */
#define SK_SAMPLES "samples"                 /* the sampler's, of a side's tasks */
#define SK_SAMPLED_USER_SHARE "sampled_user_share"

/* A side's figures that runs.csv keeps (stats_row.c), in
 * trace.per_operation.clients and .servers, each X(A, B, C, ID, KEY, PART):
 * A, B, C are passed through; PART names it in the breakdown of a side's
 * time (tbench-plot's trace chart), where the system call groups below
 * stand for syscall_us, and is NULL for a count. */
#define TRACE_SIDE_FIGURES(X, A, B, C) \
	X(A, B, C, USER_US, SK_USER_US, "user") \
	X(A, B, C, SYSCALL_US, SK_SYSCALL_US, "system calls") \
	X(A, B, C, SOFTIRQ_US, SK_SOFTIRQ_US, "softirq") \
	X(A, B, C, RUN_QUEUE_US, SK_RUN_QUEUE_US, "run-queue wait") \
	X(A, B, C, BLOCKED_US, SK_BLOCKED_US, "blocked") \
	X(A, B, C, WAKEUPS, SK_WAKEUPS, NULL) \
	X(A, B, C, WAKEUPS_CROSS_CPU, SK_WAKEUPS_CROSS_CPU, NULL)

/* The groups of system calls whose time a side's syscall_groups_us
 * object gives (µs per operation), each X(A, B, C, ID, KEY, LABEL); which
 * call is in which group is syscall_name.c's, the last takes the rest. */
#define TRACE_SYSCALL_GROUPS(X, A, B, C) \
	X(A, B, C, SEND_RECV, "send_recv", "send/recv family") \
	X(A, B, C, READ_WRITE, "read_write", "read/write") \
	X(A, B, C, SPLICE, "splice", "splice") \
	X(A, B, C, FUTEX, "futex", "futex") \
	X(A, B, C, IO_URING_ENTER, "io_uring_enter", "io_uring_enter") \
	X(A, B, C, OTHER, SK_OTHER, "other system calls")

/* The sides, X(A, ID, KEY). */
#define TRACE_SIDE_KEYS(X, A) X(A, CLIENTS, SK_CLIENTS) X(A, SERVERS, SK_SERVERS)

/* ---- operations[] and clients[] (and the merger's hosts[]) -------------- */
#define SK_NAME "name"
#define SK_ID "id"
#define SK_OPS_ALL_PHASES "ops_all_phases"
#define SK_PASSES "passes"
#define SK_CPU_USER_S "cpu_user_s"
#define SK_CPU_SYSTEM_S "cpu_system_s"
#define SK_HOST "host"
#define SK_FILE "file"

/* ---- cost.per_operation's counters: cost.c's cost_perf_name[] and
 * cost_net_name[] are these (and SK_CPU_MIGRATIONS, SK_SEGMENTS_OUT) ------ */
#define SK_TASK_CLOCK_US "task_clock_us"
#define SK_CONTEXT_SWITCHES "context_switches"
#define SK_CYCLES "cycles"
#define SK_INSTRUCTIONS "instructions"
#define SK_SYSCALLS "syscalls"
#define SK_SEGMENTS_IN "segments_in"
#define SK_RETRANSMITS "retransmits"
#define SK_DELAYED_ACKS "delayed_acks"
#define SK_DEV_TX_PACKETS "dev_tx_packets"
#define SK_DEV_TX_BYTES "dev_tx_bytes"
#define SK_DEV_RX_PACKETS "dev_rx_packets"
#define SK_DEV_RX_BYTES "dev_rx_bytes"

/* ---- the paths that readers name: JP_<ID> is "<path>" ------------------ */
#define SP(a, b) a "." b
#define SP_SETTINGS(k) SP(SK_SETTINGS, k)
#define SP_NETNS(k) SP(SK_NETNS, k)
#define SP_RESULT(k) SP(SK_RESULT, k)
#define SP_LATENCY(k) SP(SP_RESULT(SK_LATENCY), k)
#define SP_CPU(k) SP(SP_RESULT(SK_CPU), k)
#define SP_COST(k) SP(SK_COST, k)
#define SP_PER_OP(k) SP(SP_COST(SK_PER_OPERATION), k)
#define SP_PER_CLIENTS(k) SP_PER_OP(SP(SK_CLIENTS, k))
#define SP_PER_SERVERS(k) SP_PER_OP(SP(SK_SERVERS, k))
#define SP_PER_HARNESS(k) SP_PER_OP(SP(SK_HARNESS, k))
#define SP_NOISE(k) SP(SK_NOISE, k)
#define SP_TRACE(k) SP(SK_TRACE, k)
#define SP_TRACE_PER_OP(k) SP(SP_TRACE(SK_PER_OPERATION), k)
/* JP_TRACE_<SIDE>_<ID> for each figure and JP_TRACE_<SIDE>_SYS_<ID> for
 * each group of system calls, of both sides. */
#define TRACE_FIGURE_PATH(X, SIDE, side, ID, KEY, PART) \
	X(TRACE_##SIDE##_##ID, SP_TRACE_PER_OP(SP(side, KEY)))
#define TRACE_GROUP_PATH(X, SIDE, side, ID, KEY, LABEL) \
	X(TRACE_##SIDE##_SYS_##ID, SP_TRACE_PER_OP(SP(SP(side, SK_SYSCALL_GROUPS_US), KEY)))
#define TRACE_SIDE_PATHS(X, SIDE, side) \
	TRACE_SIDE_FIGURES(TRACE_FIGURE_PATH, X, SIDE, side) \
	TRACE_SYSCALL_GROUPS(TRACE_GROUP_PATH, X, SIDE, side)

#define SCHEMA_PATHS(X) \
	X(TBENCH_VERSION, SK_TBENCH_VERSION) \
	X(SETTINGS, SK_SETTINGS) \
	X(SETTINGS_BACKEND, SP_SETTINGS(SK_BACKEND)) \
	X(SETTINGS_CLIENTS, SP_SETTINGS(SK_CLIENTS)) \
	X(SETTINGS_MODEL, SP_SETTINGS(SK_MODEL)) \
	X(SETTINGS_PROCS, SP_SETTINGS(SK_PROCS)) \
	X(SETTINGS_CLIENTS_PER_PROCESS, SP_SETTINGS(SK_CLIENTS_PER_PROCESS)) \
	X(SETTINGS_COPY_REPLIES, SP_SETTINGS(SK_COPY_REPLIES)) \
	X(SETTINGS_LOADFILE, SP_SETTINGS(SK_LOADFILE)) \
	X(SETTINGS_LOADFILE_OPS, SP_SETTINGS(SK_LOADFILE_OPS)) \
	X(SETTINGS_LOADFILE_PASS_BYTES, SP_SETTINGS(SK_LOADFILE_PASS_BYTES)) \
	X(SETTINGS_TIMELIMIT_S, SP_SETTINGS(SK_TIMELIMIT_S)) \
	X(SETTINGS_WARMUP_S, SP_SETTINGS(SK_WARMUP_S)) \
	X(SETTINGS_TARGET_RATE_MB_S, SP_SETTINGS(SK_TARGET_RATE_MB_S)) \
	X(SETTINGS_PROCESSES, SP_SETTINGS(SK_PROCESSES)) \
	X(SETTINGS_RUN_ONCE, SP_SETTINGS(SK_RUN_ONCE)) \
	X(SETTINGS_START_AT, SP_SETTINGS(SK_START_AT)) \
	X(SETTINGS_INJECT_NS, SP_SETTINGS(SK_INJECT_NS)) \
	X(NETNS, SK_NETNS) \
	X(NETNS_PRIVATE, SP_NETNS(SK_PRIVATE)) \
	X(NETNS_USER_NAMESPACE, SP_NETNS(SK_USER_NAMESPACE)) \
	X(NETNS_DEVICE, SP_NETNS(SK_DEVICE)) \
	X(NETNS_TSO, SP_NETNS(SK_TSO)) \
	X(NETNS_GSO, SP_NETNS(SK_GSO)) \
	X(NETNS_GRO, SP_NETNS(SK_GRO)) \
	X(NETNS_SYSCTLS, SP_NETNS(SK_SYSCTLS)) \
	X(RESULT, SK_RESULT) \
	X(RESULT_STATUS, SP_RESULT(SK_STATUS)) \
	X(RESULT_PARTIAL, SP_RESULT(SK_PARTIAL)) \
	X(RESULT_ERROR, SP_RESULT(SK_ERROR)) \
	X(RESULT_MB_PER_SEC, SP_RESULT(SK_MB_PER_SEC)) \
	X(RESULT_OPS_PER_SEC, SP_RESULT(SK_OPS_PER_SEC)) \
	X(RESULT_EXECUTE_S, SP_RESULT(SK_EXECUTE_S)) \
	X(RESULT_TOTAL_S, SP_RESULT(SK_TOTAL_S)) \
	X(RESULT_PAYLOAD_BYTES, SP_RESULT(SK_PAYLOAD_BYTES)) \
	X(RESULT_PAYLOAD_BYTES_ALL_PHASES, SP_RESULT(SK_PAYLOAD_BYTES_ALL_PHASES)) \
	X(RESULT_OPS, SP_RESULT(SK_OPS)) \
	X(RESULT_MAX_LATENCY_MS, SP_RESULT(SK_MAX_LATENCY_MS)) \
	X(LATENCY, SP_RESULT(SK_LATENCY)) \
	X(LATENCY_AVG_MS, SP_LATENCY(SK_AVG_MS)) \
	X(LATENCY_P50_MS, SP_LATENCY(SK_P50_MS)) \
	X(LATENCY_P99_MS, SP_LATENCY(SK_P99_MS)) \
	X(LATENCY_P999_MS, SP_LATENCY(SK_P999_MS)) \
	X(CPU, SP_RESULT(SK_CPU)) \
	X(CPU_USER_S, SP_CPU(SK_USER_S)) \
	X(CPU_SYSTEM_S, SP_CPU(SK_SYSTEM_S)) \
	X(CPU_CLIENTS_USER_S, SP_CPU(SK_CLIENTS_USER_S)) \
	X(CPU_CLIENTS_SYSTEM_S, SP_CPU(SK_CLIENTS_SYSTEM_S)) \
	X(CPU_OTHERS_USER_S, SP_CPU(SK_OTHERS_USER_S)) \
	X(CPU_OTHERS_SYSTEM_S, SP_CPU(SK_OTHERS_SYSTEM_S)) \
	X(CPU_US_PER_MB, SP_CPU(SK_CPU_US_PER_MB)) \
	X(COST, SK_COST) \
	X(COST_OPERATIONS, SP_COST(SK_OPERATIONS)) \
	X(COST_DEVICE, SP_COST(SK_DEVICE)) \
	X(COST_NOT_AVAILABLE, SP_COST(SK_NOT_AVAILABLE)) \
	X(PER_OP, SP_COST(SK_PER_OPERATION)) \
	X(PER_OP_CLIENTS_TASKS, SP_PER_CLIENTS(SK_TASKS)) \
	X(PER_OP_CLIENTS_CPU_USER_US, SP_PER_CLIENTS(SK_CPU_USER_US)) \
	X(PER_OP_CLIENTS_CPU_SYSTEM_US, SP_PER_CLIENTS(SK_CPU_SYSTEM_US)) \
	X(PER_OP_CLIENTS_VOLUNTARY_SWITCHES, SP_PER_CLIENTS(SK_VOLUNTARY_SWITCHES)) \
	X(PER_OP_CLIENTS_INVOLUNTARY_SWITCHES, SP_PER_CLIENTS(SK_INVOLUNTARY_SWITCHES)) \
	X(PER_OP_SERVERS_TASKS, SP_PER_SERVERS(SK_TASKS)) \
	X(PER_OP_SERVERS_CPU_USER_US, SP_PER_SERVERS(SK_CPU_USER_US)) \
	X(PER_OP_SERVERS_CPU_SYSTEM_US, SP_PER_SERVERS(SK_CPU_SYSTEM_US)) \
	X(PER_OP_SERVERS_VOLUNTARY_SWITCHES, SP_PER_SERVERS(SK_VOLUNTARY_SWITCHES)) \
	X(PER_OP_SERVERS_INVOLUNTARY_SWITCHES, SP_PER_SERVERS(SK_INVOLUNTARY_SWITCHES)) \
	X(PER_OP_HARNESS_TASKS, SP_PER_HARNESS(SK_TASKS)) \
	X(PER_OP_HARNESS_CPU_USER_US, SP_PER_HARNESS(SK_CPU_USER_US)) \
	X(PER_OP_HARNESS_CPU_SYSTEM_US, SP_PER_HARNESS(SK_CPU_SYSTEM_US)) \
	X(PER_OP_HARNESS_VOLUNTARY_SWITCHES, SP_PER_HARNESS(SK_VOLUNTARY_SWITCHES)) \
	X(PER_OP_HARNESS_INVOLUNTARY_SWITCHES, SP_PER_HARNESS(SK_INVOLUNTARY_SWITCHES)) \
	X(PER_OP_TASK_CLOCK_US, SP_PER_OP(SK_TASK_CLOCK_US)) \
	X(PER_OP_CONTEXT_SWITCHES, SP_PER_OP(SK_CONTEXT_SWITCHES)) \
	X(PER_OP_CPU_MIGRATIONS, SP_PER_OP(SK_CPU_MIGRATIONS)) \
	X(PER_OP_CYCLES, SP_PER_OP(SK_CYCLES)) \
	X(PER_OP_INSTRUCTIONS, SP_PER_OP(SK_INSTRUCTIONS)) \
	X(PER_OP_SYSCALLS, SP_PER_OP(SK_SYSCALLS)) \
	X(PER_OP_SEGMENTS_OUT, SP_PER_OP(SK_SEGMENTS_OUT)) \
	X(PER_OP_SEGMENTS_IN, SP_PER_OP(SK_SEGMENTS_IN)) \
	X(PER_OP_RETRANSMITS, SP_PER_OP(SK_RETRANSMITS)) \
	X(PER_OP_DELAYED_ACKS, SP_PER_OP(SK_DELAYED_ACKS)) \
	X(PER_OP_DEV_TX_PACKETS, SP_PER_OP(SK_DEV_TX_PACKETS)) \
	X(PER_OP_DEV_TX_BYTES, SP_PER_OP(SK_DEV_TX_BYTES)) \
	X(PER_OP_DEV_RX_PACKETS, SP_PER_OP(SK_DEV_RX_PACKETS)) \
	X(PER_OP_DEV_RX_BYTES, SP_PER_OP(SK_DEV_RX_BYTES)) \
	X(PER_OP_PAYLOAD_BYTES_PER_SEGMENT, SP_PER_OP(SK_PAYLOAD_BYTES_PER_SEGMENT)) \
	X(NOISE, SK_NOISE) \
	X(NOISE_STEAL_PCT, SP_NOISE(SK_STEAL_PCT)) \
	X(NOISE_OTHER_CPU_PCT, SP_NOISE(SK_OTHER_CPU_PCT)) \
	X(NOISE_OUTSIDE_RUNNABLE, SP_NOISE(SK_OUTSIDE_RUNNABLE)) \
	X(NOISE_CPU_MIGRATIONS, SP_NOISE(SK_CPU_MIGRATIONS)) \
	X(NOISE_FREQ_CHANGED_CPUS, SP_NOISE(SP(SK_CPU_FREQ, SK_CHANGED_CPUS))) \
	X(NOISE_LONGEST_STALL_S, SP_NOISE(SK_LONGEST_STALL_S)) \
	X(NOISE_OVERRUN_S, SP_NOISE(SK_OVERRUN_S)) \
	X(NOISE_DISTURBED, SP_NOISE(SK_DISTURBED)) \
	X(NOISE_REASONS, SP_NOISE(SK_REASONS)) \
	X(TRACE, SK_TRACE) \
	X(TRACE_OPERATIONS, SP_TRACE(SK_OPERATIONS)) \
	X(TRACE_RECONCILED_RATIO, SP_TRACE(SK_RECONCILED_RATIO)) \
	X(TRACE_PROBE_CPU_US, SP_TRACE(SK_PROBE_CPU_US)) \
	X(TRACE_NET_RX_US, SP_TRACE_PER_OP(SP(SK_SOFTIRQ_US, SK_NET_RX))) \
	X(TRACE_NET_TX_US, SP_TRACE_PER_OP(SP(SK_SOFTIRQ_US, SK_NET_TX))) \
	TRACE_SIDE_KEYS(TRACE_SIDE_PATHS, X) \
	X(BACKEND_COUNTERS, SK_BACKEND_COUNTERS) \
	X(OPERATIONS, SK_OPERATIONS) \
	X(CLIENTS, SK_CLIENTS)

/* JP_NONE (no path), then one per path above; the table that names them
 * is schema.c's. */
enum jpath {
	JP_NONE,
#define SCHEMA_ENUM(id, path) JP_##id,
	SCHEMA_PATHS(SCHEMA_ENUM)
#undef SCHEMA_ENUM
	JP_COUNT
};

/* The dotted path of p ("settings.clients"); NULL for JP_NONE. */
const char *jpath(enum jpath p);
/* The value at p in doc; NULL when absent (or p is JP_NONE). */
const struct json_node *jget(const struct json_node *doc, enum jpath p);

/* A latency object for h, histogram included ({ "count": N, "avg_ms":
 * ..., "histogram": ... }): the writer and the merger both write it. */
struct json_object *schema_latency(const struct histogram *h);
/* Adds its figures without the histogram to o (each of operations[]). */
void schema_add_latency_figures(struct json_object *o, const struct histogram *h);

/* A document's schema_version is one this program reads: none (an older
 * tbench's) or at most SCHEMA_VERSION. 0, or -1 with err naming path. */
int schema_check(const struct json_node *doc, const char *path, struct errbuf *err);
/* json_read_file and schema_check: 0, or -1 with err set (doc freed). */
int schema_read_file(struct json_node *doc, const char *path, struct errbuf *err);

#endif

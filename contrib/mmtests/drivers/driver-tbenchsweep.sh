# shellcheck shell=bash  # sourced by mmtests' run-single-test.sh
"$SHELLPACK_TOPLEVEL"/shellpack_src/src/refresh.sh tbenchsweep

run_bench() {
	"$SHELLPACK_INCLUDE"/shellpack-bench-tbenchsweep	\
		--backends "$TBENCHSWEEP_BACKENDS"	\
		--clients "$TBENCHSWEEP_CLIENTS"	\
		--offload "$TBENCHSWEEP_OFFLOAD"	\
		--duration "$TBENCHSWEEP_DURATION"	\
		--warmup "$TBENCHSWEEP_WARMUP"		\
		--reps "$TBENCHSWEEP_REPS"
	return $?
}

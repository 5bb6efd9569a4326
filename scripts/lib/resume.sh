# shellcheck shell=bash
# --resume --out DIR (sourced by tbench-sweep): the sweep's own options,
# kept in DIR/meta.json as "argv", so that "--resume --out DIR" alone goes
# on with exactly the sweep that was interrupted. An option given beside
# --resume must agree with the stored one, except those a session may set
# anew: where it writes, which programs, how verbose, whether it only plans,
# and how far a --precision sweep may go.

# The options of a session alone, never stored; those of the sweep that a
# session may change (stored, the last value given).
RESUME_SESSION_OPTS=" --resume --retry-failed --out --tbench --tbench-srv --tbench-stats -q --quiet -n --dry-run --plan "
RESUME_CHANGEABLE_OPTS=" --max-reps --budget "

# ARGS split into options, one a line, NUL-separated: each option with its
# value when it takes one (the next word, whatever it starts with), "--"
# with the rest (tbench's own arguments); --name=value as one.
resume_groups() { # ARGS...
	local group a
	while [ $# -gt 0 ]; do
		a="$1"
		shift
		if [ "$a" = -- ]; then
			group=(-- "$@")
			printf '%s\0' "${group[*]@Q}"
			return
		fi
		group=("$a")
		if [ $# -gt 0 ] && resume_takes_value "$a"; then
			group+=("$1")
			shift
		fi
		printf '%s\0' "${group[*]@Q}"
	done
}

# Status 0 when OPTION takes a value: parse_options, given it alone, says
# it needs one. The options' arity is parse_options' alone to know.
resume_takes_value() { # OPTION
	local err
	[[ "$1" == -* ]] && [[ "$1" != *=* ]] || return 1
	err="$( (parse_options "$1") 2>&1 >/dev/null || true)"
	[[ "$err" == *"$1 needs a value"* ]]
}

# The option of a group ("'--clients' '1,2'" -> --clients), one name for
# each spelling (-t: --time, -n and --dry-run: --plan, -q: --quiet).
resume_opt_of() { # GROUP
	local words opt
	eval "words=($1)"
	opt="${words[0]%%=*}"
	case "$opt" in -t) opt=--time ;; -n | --dry-run) opt=--plan ;; -q) opt=--quiet ;; esac
	printf '%s\n' "$opt"
}

# What a group sets, to find it among others: its option, and for --vary
# the knob ("--vary mtu"); --name=value as --name value.
resume_key_of() { # GROUP
	local words opt
	eval "words=($1)"
	opt="$(resume_opt_of "$1")"
	[ "$opt" = --vary ] || { printf '%s\n' "$opt"; return; }
	[[ "${words[0]}" != *=* ]] || words=("${words[0]%%=*}" "${words[0]#*=}")
	printf '%s %s\n' "$opt" "${words[1]%%=*}"
}

# A group as words, --name=value split, for comparing two spellings.
resume_words_of() { # GROUP
	local words
	eval "words=($1)"
	[[ "${words[0]}" != --*=* ]] || words=("${words[0]%%=*}" "${words[0]#*=}" "${words[@]:1}")
	printf '%s\n' "${words[*]@Q}"
}

# The options as parse_options leaves them, for comparing two command lines:
# every global variable but bash's own and the command line itself.
resume_state() { # ARGS...
	(
		parse_options "$@" >/dev/null 2>&1 || exit 1
		# the globals (upper case; locals of the callers are lower case)
		declare -p | grep -E '^declare -[^ ]* [A-Z][A-Z0-9_]*=' |
			grep -Ev '^declare -[^ ]* (BASH[A-Z_]*|RANDOM|SRANDOM|SECONDS|EPOCH[A-Z]*|LINENO|FUNCNAME|PIPESTATUS|ORIG_ARGS)='
	)
}

# The command line to parse: with --resume and a DIR/meta.json that has
# argv, that argv and then the session's own options of ARGS; else ARGS.
# A given option that changes what the stored ones set is a usage error
# that names it and the stored value. Sets RESUME_ARGS.
RESUME_ARGS=()
# shellcheck disable=SC2034  # RESUME_ARGS: tbench-sweep's main reads it
resume_args() { # ARGS...
	RESUME_ARGS=("$@")
	local out="" a prev="" resume=0 stored=() groups=() g opt base wrong=() mine=()
	for a in "$@"; do
		[ "$a" != -- ] || break
		case "$a" in --resume) resume=1 ;; --out=*) out="${a#--out=}" ;; -h | --help | --version) return 0 ;; esac
		[ "$prev" != --out ] || out="$a"
		prev="$a"
	done
	[ "$resume" -eq 1 ] && [ -n "$out" ] && [ -f "$out/meta.json" ] || return 0
	command -v jq >/dev/null || die "--resume: jq reads the sweep's options from $out/meta.json: install it (apt-get install jq)"
	jq -e '.argv | type == "array"' "$out/meta.json" >/dev/null 2>&1 || return 0
	mapfile -d '' stored < <(jq -j '.argv[] | . + "\u0000"' "$out/meta.json")
	# the session's options go before tbench's own (after "--")
	local i=0
	while [ "$i" -lt ${#stored[@]} ] && [ "${stored[$i]}" != -- ]; do i=$((i + 1)); done
	local head=("${stored[@]:0:i}") tail=("${stored[@]:i}")
	base="$(resume_state "${stored[@]}")" ||
		die "--resume: $out/meta.json's argv is not a command line this version of $PROG takes: continue it with the version that made it, or start a new sweep"
	local stored_words=" " sg
	while IFS= read -r -d '' sg; do stored_words+="$(resume_words_of "$sg") "; done < <(resume_groups "${stored[@]}")
	mapfile -d '' groups < <(resume_groups "$@")
	for g in "${groups[@]}"; do
		opt="$(resume_opt_of "$g")"
		eval "a=($g)"
		# shellcheck disable=SC2154  # a: set by the eval
		if [[ " $RESUME_SESSION_OPTS $RESUME_CHANGEABLE_OPTS " == *" $opt "* ]]; then
			eval "mine+=($g)"
		elif [ "$opt" = -- ]; then
			[ "${a[*]:1}" = "${tail[*]:1}" ] || wrong+=("${a[*]} (the sweep's: ${tail[*]:-no tbench arguments})")
		elif [[ "$stored_words" == *" $(resume_words_of "$g") "* ]]; then
			:   # the sweep's own option, as it was given
		elif [ "$(resume_state "${head[@]}" "${a[@]}" "${tail[@]}" || true)" != "$base" ]; then
			wrong+=("$(eval "printf '%s ' $g")(the sweep's: $(resume_stored "$(resume_key_of "$g")" "${stored[@]}"))")
		fi
	done
	[ ${#wrong[@]} -eq 0 ] || usage_error "--resume: $(printf '%s; ' "${wrong[@]}" | sed 's/; $//'): not the sweep's own options," \
		"which $out/meta.json keeps. To continue it, give --resume --out $out with none of them, or each as" \
		"it was (--max-reps and --budget may change); or start a new sweep"
	RESUME_ARGS=("${head[@]}" "${mine[@]}" "${tail[@]}")
	echo "$PROG: --resume: the sweep's options from $out/meta.json: $(shell_words "${stored[@]}")" >&2
}

# How the stored argv gives KEY (resume_key_of: "--clients 1,2,8", or "not given").
resume_stored() { # KEY ARGV...
	local opt="$1" g
	shift
	while IFS= read -r -d '' g; do
		[ "$(resume_key_of "$g")" != "$opt" ] || { eval "printf '%s' \"\$(printf '%s ' $g)\"" | sed 's/ $//'; return; }
	done < <(resume_groups "$@")
	echo "not given"
}

# The sweep's own options of ARGS, for meta.json's argv: all but the
# session's (RESUME_SESSION_OPTS), a changeable one only as last given, as a
# JSON array.
resume_argv_json() { # ARGS...
	local g opt groups=() keep=() i j later
	mapfile -d '' groups < <(resume_groups "$@")
	for ((i = 0; i < ${#groups[@]}; i++)); do
		opt="$(resume_opt_of "${groups[$i]}")"
		[[ "$RESUME_SESSION_OPTS" != *" $opt "* ]] || continue
		later=0
		if [[ "$RESUME_CHANGEABLE_OPTS" == *" $opt "* ]]; then
			for ((j = i + 1; j < ${#groups[@]}; j++)); do
				[ "$(resume_opt_of "${groups[$j]}")" != "$opt" ] || later=1
			done
		fi
		[ "$later" -eq 1 ] || eval "keep+=(${groups[$i]})"
	done
	json_strings "${keep[@]}"
}

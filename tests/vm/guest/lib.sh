# SPDX-License-Identifier: GPL-2.0
# Shell library of the srnic test VMs: KTAP output, the control channel to the
# peer VM (a virtio-serial port, independent of the network link under test),
# and kmemleak reporting. Sourced by /init and by every case.

# Sourced once per shell: a peer command, run in a subshell of the peer's
# command loop whose shell has sourced it, skips it ($$ is the main shell's pid
# in its subshells too).
[ "${SRNIC_LIB_OF:-}" = "$$" ] && return 0
SRNIC_LIB_OF=$$

# The control line (/init finds its virtio-serial port, SRNIC_CTL).
CTL=${SRNIC_CTL:-/dev/ttyS1}
SRNIC_KO=/srnic/srnic.ko
PEER_TIMEOUT=${PEER_TIMEOUT:-600}

# The control line stays open on fd 3, opened once by /init and inherited by
# every process (a virtio-serial port can be open only once at a time; fd 3 is
# the control line's in every case script).
ctl_setup() {
	[ -n "$CTL_OPEN" ] && return 0
	exec 3<>"$CTL"
	CTL_OPEN=1
	export CTL_OPEN
}

# peer CMD...: runs the shell command CMD on the peer VM, prints its output,
# returns its exit status (255 when no answer came within PEER_TIMEOUT s,
# scaled). A command of one line travels as it is ("SH ID CMD"), one of several
# lines base64-encoded ("CMD ID B64"); output comes back base64-encoded, one
# line, tagged with the id of this call: an answer that comes after its caller
# gave up (or was killed) is skipped by the next caller instead of being taken
# for its own. Under TCG every process costs about 0.1 s in the debug kernel,
# so this runs none in the common case (a case calls it dozens of times).
#
# The peer runs CMD in a subshell of its command loop, which has sourced this
# file: ". /srnic/lib.sh" in CMD costs nothing there (the guard at its top).
peer() {
	ctl_setup
	local id line rc=255 nl='
'
	read -r id </proc/sys/kernel/random/uuid
	case "$*" in
	*"$nl"*) printf 'CMD %s %s\n' "$id" "$(printf '%s' "$*" | base64 -w0)" >&3 ;;
	*) printf 'SH %s %s\n' "$id" "$*" >&3 ;;
	esac
	while IFS= read -r -t "$((PEER_TIMEOUT * TIME_SCALE))" line; do
		case "$line" in
		"RC $id "*) rc=${line#RC "$id" }; break ;;
		"OUT $id "*) printf '%s' "${line#OUT "$id" }" | base64 -d ;;
		esac
	done <&3
	return "$rc"
}

# peer_serve: the loop the peer VM runs until told to finish. Each command runs
# in the background, so that one that hangs does not keep the peer from
# answering the next (its caller has given up on it by then).
peer_serve() {
	ctl_setup
	echo READY >&3
	local line rest eofs=0
	while :; do
		if ! IFS= read -r line <&3; then
			# End of file: the line's other end is not connected (a
			# virtio-serial port reads so then). Wait for it (60 s).
			eofs=$((eofs + 1))
			[ $eofs -lt 600 ] || break
			sleep 0.1
			continue
		fi
		eofs=0
		case "$line" in
		PING) echo READY >&3 ;;
		"SH "*)
			rest=${line#SH }
			peer_run "${rest%% *}" "${rest#* }" &
			;;
		"CMD "*)
			rest=${line#CMD }
			# (Expanded in the background job: the loop does not wait.)
			peer_run "${rest%% *}" "$(printf '%s' "${rest#* }" | base64 -d)" &
			;;
		FINISH) break ;;
		esac
	done
}

# peer_run ID CMD: one command of peer_serve, run by eval in this subshell (no
# new shell to start), its answer tagged with ID.
peer_run() {
	local out rc
	out=$(eval "$2" 2>&1 </dev/null)
	rc=$?
	[ -n "$out" ] && printf 'OUT %s %s\n' "$1" "$(printf '%s\n' "$out" | base64 -w0)" >&3
	printf 'RC %s %s\n' "$1" "$rc" >&3
}

# peer_wait_ready: waits (120 s) until the peer answers. The peer's first
# READY can come before this VM opened its end (or a PING before the peer
# listens): ask again (PING) every 2 s.
peer_wait_ready() {
	ctl_setup
	local line n=60
	while [ $n -gt 0 ]; do
		echo PING >&3
		while IFS= read -r -t 2 line; do
			[ "$line" = READY ] && return 0
		done <&3
		n=$((n - 1))
	done
	echo "srnic-vm: the peer VM never became ready"
	return 1
}

peer_finish() { ctl_setup; echo FINISH >&3; }

# ---- Time ----

# uptime_cs: centiseconds since boot.
uptime_cs() {
	local u _
	read -r u _ </proc/uptime
	echo "${u%.*}${u#*.}"
}

# Every fixed bound below (case timeouts, waits for the peer) is written for
# the reference machine (2 cores, TCG, debug kernel) and multiplied by
# TIME_SCALE: how many times slower than the reference this guest ran a fixed
# CPU workload at boot (calibrate). Waits for transfers do not need it: the
# tools fail a wait only when nothing moves (no progress), never for a size.
CAL_REF_CS=${CAL_REF_CS:-100}
TIME_SCALE=${TIME_SCALE:-1}

# calibrate: measures the workload (16 MiB through md5sum) and sets and exports
# TIME_SCALE (at least 1) and CAL_CS.
calibrate() {
	local t0 t1
	t0=$(uptime_cs)
	dd if=/dev/zero bs=64k count=256 2>/dev/null | md5sum >/dev/null
	t1=$(uptime_cs)
	CAL_CS=$((t1 - t0))
	TIME_SCALE=$(((CAL_CS + CAL_REF_CS - 1) / CAL_REF_CS))
	[ "$TIME_SCALE" -ge 1 ] || TIME_SCALE=1
	export TIME_SCALE CAL_CS
}

# scaled SECONDS: SECONDS times TIME_SCALE.
scaled() { echo $(($1 * TIME_SCALE)); }

# count SHORT LONG: a case's repetition count: SHORT in `make check`, LONG in
# `make check-long` (LONG_RUN=1, from srnic.long=1 on the kernel command line).
count() { if [ "${LONG_RUN:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi; }

# wait_until SECONDS CMD...: runs CMD every 0.2 s until it succeeds (0) or
# SECONDS (scaled) have passed (1). The bound is the clock's, not a count of
# tries: a CMD that takes time of its own (a peer call takes 0.1 to 0.5 s
# under TCG) must not stretch it (a wait of 30 s with six peer calls per try
# outlasted its case's 8-minute limit once).
wait_until() {
	local end=$(($(uptime_cs) + $1 * TIME_SCALE * 100))
	shift
	while ! "$@"; do
		[ "$(uptime_cs)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# inject_counted N STAT CMD...: sends N packets that the receiver is to drop
# and count, and waits until it has: runs CMD with the number still to send
# appended, waits (10 s, scaled) until the counter STAT prints (a command line,
# run by eval) has grown by N since the call, and sends again what it has not
# counted, three rounds at most, saying so. The link between the VMs (a UDP
# socket between the two QEMUs) can lose a frame when the host is busy: a test
# of how the receiver counts must not take that for the receiver's fault.
# Fails when the counter has not grown by N after the third round (and says
# by how much it grew, in the case's not-ok line); a counter that grew by more
# is for the caller's exact checks to find.
inject_counted() {
	local n=$1 stat=$2 base have left=$1 round=1 why
	shift 2
	base=$(eval "$stat") && [ -n "$base" ] || { echo "inject_counted: no counter from '$stat'"; return 1; }
	while :; do
		"$@" "$left" || return 1
		wait_until 10 counted_ge "$stat" $((base + n)) && return 0
		have=$(($(eval "$stat") - base))
		left=$((n - have))
		[ $left -gt 0 ] || return 0
		if [ $round -ge 3 ]; then
			why="$stat grew by $have of $n in $round rounds"
			echo "inject_counted: $why"
			case_why "$why"
			return 1
		fi
		echo "inject_counted: $stat grew by $have of $n: $left sent again (lost on the link?)"
		round=$((round + 1))
	done
}
counted_ge() { [ "$(eval "$1")" -ge "$2" ]; }

# ---- The case runner ----

# A case may declare, in comment lines of its own:
#   # budget: SECONDS    what it should take on the reference machine; run.sh
#                        warns when it takes longer than that times
#                        TIME_SCALE (default 30);
#   # timeout: SECONDS   the most it may take on the reference machine before it
#                        is stopped and fails (default: CASE_TIMEOUT_FACTOR times
#                        its budget). Both are scaled by TIME_SCALE.
# A hung case costs its whole timeout, so timeouts stay a small multiple of
# what the case takes: the suite has to end within CI's time.
CASE_TIMEOUT_FACTOR=4
case_limit() { # case_limit NAME KEY DEFAULT
	local v
	v=$(sed -n "s/^# $2: *\([0-9][0-9]*\)\$/\1/p" "/srnic/cases/$1.sh" | head -n1)
	echo "${v:-$3}"
}

# case_run NAME SECONDS: runs the case in a session of its own, its output
# prefixed with "# " and the seconds since it started; returns its exit
# status, or 124 when it was still running after SECONDS (having printed where
# each of its tasks, and of its background jobs on the peer, was). Whatever the case left running here (background
# jobs) is killed with its session when it ends.
case_run() {
	local name=$1 t=$2 pid log_pid n rc
	rm -f /tmp/.case_out /tmp/.case_exit
	mkfifo /tmp/.case_out
	# Each line of the case's output: "# [SECONDS] LINE", seconds since the
	# case started (where a slow case spends its time).
	awk -v s="$(cut -d' ' -f1 /proc/uptime)" '{
		getline u < "/proc/uptime"; close("/proc/uptime"); split(u, a, " ")
		printf "# [%6.1f] %s\n", a[1] - s, $0; fflush()
	}' </tmp/.case_out &
	log_pid=$!
	# In a shell without job control a background job is not a process group
	# leader, so setsid does not fork: $! is the session (and group) id.
	setsid sh -c 'cd /tmp && sh "$1"; echo $? >/tmp/.case_exit' _ "/srnic/cases/$name.sh" \
		</dev/null >/tmp/.case_out 2>&1 &
	pid=$!
	n=$((t * 5))
	while [ ! -f /tmp/.case_exit ] && [ $n -gt 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.2
		n=$((n - 1))
	done
	if [ -f /tmp/.case_exit ]; then rc=$(cat /tmp/.case_exit); else
		rc=124
		# Where it hung: every task of the case's session here, and every
		# task the case started on the peer (bg_start's sessions).
		{
			echo "case_run: $name still running after $t s; its tasks here:"
			session_stacks "$pid"
			echo "case_run: tasks of the peer's background jobs:"
			PEER_TIMEOUT=30 peer ". /srnic/lib.sh; bg_stacks"
		} 2>&1 | sed 's/^/# /'
	fi
	kill -9 -- "-$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# awk ends when the last writer of the fifo is gone; a process that left
	# the case's session with the fifo open must not stop the run.
	n=25
	while kill -0 "$log_pid" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.2; n=$((n - 1)); done
	kill "$log_pid" 2>/dev/null
	wait "$log_pid" 2>/dev/null
	rm -f /tmp/.case_out /tmp/.case_exit
	return "$rc"
}

# deadline_left: seconds until the suite's deadline (SUITE_DEADLINE, uptime
# seconds; a minute is kept for the last case's cleanup), or a large number
# when there is none.
deadline_left() {
	if [ -z "${SUITE_DEADLINE:-}" ]; then echo 999999; return; fi
	echo $((SUITE_DEADLINE - 60 - $(uptime_cs) / 100))
}

# run_cases [a,b,...]: runs the named cases (default: all) as KTAP. A case
# passes only if it called `pass` (its last word), exited 0 within its time
# limit, and afterwards srnic was idle in both VMs and unloaded from both.
run_cases() {
	local list n=0 i=0 name rc st t budget start secs verdict why left
	if [ -n "$1" ]; then list=$(echo "$1" | tr ',' ' '); else
		list=$(for f in /srnic/cases/*.sh; do basename "$f" .sh; done)
	fi
	for name in $list; do n=$((n + 1)); done
	echo "KTAP version 1"
	echo "1..$n"
	echo "# time scale: $TIME_SCALE (calibration ${CAL_CS:-?} cs, reference $CAL_REF_CS cs)"
	for name in $list; do
		i=$((i + 1))
		if [ ! -f "/srnic/cases/$name.sh" ]; then
			echo "not ok $i $name # no such case"
			continue
		fi
		left=$(deadline_left)
		if [ "$left" -le 0 ]; then
			echo "not ok $i $name # not run: the suite's deadline (srnic.deadline=$SUITE_DEADLINE) passed"
			continue
		fi
		echo "# ---- $name"
		budget=$(case_limit "$name" budget 30)
		t=$(scaled "$(case_limit "$name" timeout $((budget * CASE_TIMEOUT_FACTOR)))")
		# check-long's counts are up to 50 times larger.
		[ "${LONG_RUN:-0}" = 1 ] && t=$((t * 10))
		# make fuzz-abi DURATION=N: the fuzzer runs N s (not scaled).
		t=$((t + ${FUZZ_SECONDS:-0}))
		# Never past the suite's deadline (the case's cleanup comes after).
		[ "$t" -le "$left" ] || t=$left
		start=$(uptime_cs)
		rm -f /tmp/.case_rc /tmp/.case_why
		case_run "$name" "$t"
		st=$?
		rc=$(cat /tmp/.case_rc 2>/dev/null || echo none)
		rm -f /tmp/.case_rc
		verdict="not ok" why=
		if [ "$st" = 124 ]; then
			why="timed out after $t s"
		elif [ "$st" = 0 ] && [ "$rc" = 0 ]; then
			verdict=ok
		elif [ "$st" = 0 ] && [ "$rc" = 4 ]; then
			verdict=skip
		elif [ "$rc" = none ]; then
			why="ended without pass (exit status $st)"
		else
			why="failed (exit status $st)"
		fi
		[ -s /tmp/.case_why ] && why="$why: $(cat /tmp/.case_why)"
		rm -f /tmp/.case_why
		echo "# ---- $name: cleanup"
		case_cleanup "$verdict" 2>&1 | sed 's/^/# /'
		if [ -f /tmp/.cleanup_failed ]; then
			verdict="not ok" why="${why:+$why; }$(cat /tmp/.cleanup_failed)"
			rm -f /tmp/.cleanup_failed
		fi
		secs=$((($(uptime_cs) - start) / 100))
		echo "# time: $name $secs s (budget $((budget * TIME_SCALE)) s)"
		case "$verdict" in
		ok) echo "ok $i $name" ;;
		skip) echo "ok $i $name # SKIP" ;;
		*) echo "not ok $i $name # $why" ;;
		esac
	done
}

# case_cleanup VERDICT: after every case, whatever its verdict (a failed one
# first shows srnic's last kernel messages of both VMs): kills what it started
# in the background (bg_start, peer_bg) in both VMs and deletes a siw0 a case
# left behind (siw_gone), then checks that srnic is
# idle in both VMs (every object gauge at zero) and unloads it from both. A
# failure is written to /tmp/.cleanup_failed.
case_cleanup() { # case_cleanup VERDICT
	local why= prc
	if [ "$1" = "not ok" ]; then
		# What srnic said (its pr_info lines stay off the console).
		echo "srnic's last kernel messages here:"
		dmesg | grep -i srnic | tail -n 20
		echo "and on the peer:"
		peer "dmesg | grep -i srnic | tail -n 20"
		# A program that died of a signal (the kernel names it, the
		# address and the library it was in).
		echo "user-space crashes here: $(crash_lines)"
		echo "and on the peer: $(peer ". /srnic/lib.sh; crash_lines")"
		# And what the background commands of the case printed last.
		bg_logs
		peer ". /srnic/lib.sh; bg_logs"
	fi
	# Both halves at once: one peer command, not one per step.
	peer ". /srnic/lib.sh; cleanup_here" >/tmp/.cleanup_peer 2>&1 &
	prc=$!
	cleanup_here || why="the cleanup failed here"
	wait "$prc"
	case $? in
	0) ;;
	255) why="${why:+$why; }the peer did not answer" ;;
	*) why="${why:+$why; }the cleanup failed on the peer" ;;
	esac
	cat /tmp/.cleanup_peer
	[ -z "$why" ] || echo "$why" >/tmp/.cleanup_failed
}

# cleanup_here: one VM's half of case_cleanup: kills what the case started in
# the background, unloads srnic's kernel clients and a siw0 left behind,
# waits (10 s, scaled) until srnic holds nothing, and unloads it. Prints what
# went wrong and returns 1 if anything did.
cleanup_here() {
	local bad=0
	bg_kill_all
	clients_unload
	siw_gone
	idle_wait_here 10 || bad=1
	unload_checked || bad=1
	return $bad
}

# Helpers for case scripts. A case ends with `pass` (at its top level, not in a
# subshell), `skip REASON` or `fail REASON`; ending any other way, or being
# killed at its time limit, fails it. A failure sticks: `fail` in a subshell
# (say in a command substitution) is not undone by a later `pass`.

# The shell that sourced this file: a case sources it at its top level. A
# builtin's redirection is opened by the shell itself, so /proc/self is that
# shell (a subshell is a process of its own).
read -r CASE_SHELL _ </proc/self/stat
pass() {
	local me
	read -r me _ </proc/self/stat
	[ "$me" = "$CASE_SHELL" ] || fail "pass called in a subshell"
	if [ "$(cat /tmp/.case_rc 2>/dev/null || echo 0)" != 0 ]; then
		echo "FAIL: a check failed earlier (in a subshell)"
		exit 1
	fi
	echo 0 >/tmp/.case_rc
	exit 0
}
skip() { echo "SKIP: $*"; echo 4 >/tmp/.case_rc; exit 0; }
# long_only: skips the case in make check's full run; it runs in make
# check-long and whenever it is named (make vm-test CASES=..., run.sh CASE).
# For cases whose coverage others share, while the full run under TCG takes
# about an hour on slow hosts (Documentation/srnic/testing.rst).
long_only() {
	[ "${LONG_RUN:-0}" = 1 ] || [ -n "$CASES" ] ||
		skip "make check-long only (or name it): the full run's length under TCG"
}
# case_why REASON: what the case's not-ok line is to say, unless a reason
# was given before (the first one stays).
case_why() { [ -f /tmp/.case_why ] || echo "$*" | tr '\n' ' ' | cut -c1-300 >/tmp/.case_why; }
# fail MESSAGE: fails the case. The first MESSAGE also goes to the case's
# "not ok" line, which survives where a log is cut short (CI excerpts).
# FAIL_DIAG: a command a case sets once, near its top, that prints what would
# explain a failure (vmtp_counters, say); fail runs it first, once, so that
# every way of failing (fail, check, expect_eq, a helper's own fail) shows it.
fail() {
	if [ -n "${FAIL_DIAG:-}" ]; then
		local diag=$FAIL_DIAG
		FAIL_DIAG=
		echo "-- $diag (the case's FAIL_DIAG):"
		$diag
	fi
	echo "FAIL: $*"
	case_why "$*"
	echo 1 >/tmp/.case_rc
	exit 1
}
check() { # check DESCRIPTION CMD...: runs CMD, fails the case if it fails
	local what=$1; shift
	if "$@"; then echo "ok: $what"; else fail "$what"; fi
}
expect_eq() { # expect_eq DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then echo "ok: $1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# ucmatose_siw ADDR PORT COUNT SIZE CRC WHAT: rdma-core's ucmatose on siw (the
# peer, siw0 up) as the server bound to ADDR, `srnic ucmatose` here as the
# client, COUNT messages of SIZE each way, CRC "" or --crc; fails the case
# (naming WHAT) unless both end cleanly, every message arrived with its size,
# and the negotiation gave IRD = ORD = 1 and CRC exactly when asked.
ucmatose_siw() {
	local addr=$1 port=$2 c=$3 size=$4 crc=$5 what=$6 out srv rc prc mpa
	peer_bg ucma_srv "timeout 300 ucmatose -b $addr -p $port -C $c -S $size"
	wait_listen "$port" peer || fail "ucmatose server did not listen ($what)"
	out=$(bounded 300 srnic ucmatose -s "$addr" -p "$port" -C "$c" -S "$size" -t 60 $crc 2>&1)
	rc=$?
	echo "$out"
	srv=$(peer_wait ucma_srv 60)
	prc=$?
	echo "$srv"
	[ $rc = 0 ] || fail "srnic ucmatose client ($what)"
	[ $prc = 0 ] && echo "$srv" | grep -q "^return status 0$" || fail "ucmatose server ($what)"
	echo "$out" | grep -q "^ucmatose: client sent=$c received=$c size=$size " || fail "message count ($what)"
	mpa=$(echo "$out" | sed -n 's/^srnic: ucmatose connected .* ird=\([0-9]*\) ord=\([0-9]*\) mpa=\(.*\)$/\1 \2 \3/p')
	expect_mpa "$what" "$mpa" "$crc"
}

expect_mpa() { # expect_mpa WHAT "IRD ORD MPA" CRC: IRD = ORD = 1, CRC exactly when CRC is non-empty
	local want="1 1 none"
	[ -z "$3" ] || want="1 1 crc,crc-tx,crc-rx"
	expect_eq "negotiated ird ord mpa ($1)" "$2" "$want"
}

kmemleak_report() {
	local k=/sys/kernel/debug/kmemleak
	[ -e $k ] || return 0
	# Two scans: kmemleak reports an object only once it is old enough and has
	# been seen unreferenced in more than one scan.
	echo scan >$k; sleep 6; echo scan >$k
	local n
	n=$(grep -c "unreferenced object" $k)
	echo "srnic-vm: kmemleak: $n unreferenced objects"
	cat $k
}

# load_srnic_both: (re)load srnic in this VM and the peer.
load_srnic_both() {
	load_srnic
	peer ". /srnic/lib.sh; srnic_loaded || insmod $SRNIC_KO" || fail "insmod on the peer"
}

# clients_unload: unmaps every srnic_blk device a case left, and unloads the
# kernel clients of srnic (srnic_blk, srnic_ktest) from this VM; unmounts
# the file systems on its devices first.
clients_unload() {
	local d
	# File systems on srnic_blk devices first (blk_fs, blk_pressure).
	for d in $(awk '$1 ~ "^/dev/srnicb" { print $2 }' /proc/mounts); do
		echo "unmounting the $d left behind in $ROLE"
		umount "$d" || umount -l "$d"
	done
	if [ -r /sys/kernel/srnic_blk/devices ]; then
		for d in $(cut -d' ' -f1 /sys/kernel/srnic_blk/devices); do
			echo "unmapping the $d left behind in $ROLE"
			echo "$d" >/sys/kernel/srnic_blk/unmap_device
		done
	fi
	for d in srnic_blk srnic_ktest; do
		grep -q "^$d " /proc/modules || continue
		echo "unloading the $d left behind in $ROLE"
		rmmod "$d"
	done
	return 0
}

# memcg_new NAME BYTES: a memory cgroup /sys/fs/cgroup/NAME (made anew) with
# memory.max BYTES and no swap; prints its path. Mounts cgroup2 and enables
# the memory controller first. Returns 1 (with the reason on stderr) when the
# VM kernel has no cgroups or no memory controller, 2 when a step fails.
memcg_new() {
	local cg=/sys/fs/cgroup g=/sys/fs/cgroup/$1
	[ -d $cg ] || { echo "no $cg: the VM kernel lacks CONFIG_CGROUPS/CONFIG_MEMCG" >&2; return 1; }
	grep -q " $cg cgroup2 " /proc/mounts || mount -t cgroup2 none $cg || { echo "mount cgroup2" >&2; return 2; }
	grep -qw memory $cg/cgroup.controllers || { echo "no memory controller: the VM kernel lacks CONFIG_MEMCG" >&2; return 1; }
	echo +memory >$cg/cgroup.subtree_control || { echo "enable the memory controller" >&2; return 2; }
	[ -d "$g" ] && rmdir "$g"
	mkdir "$g" || { echo "mkdir $g" >&2; return 2; }
	echo "$2" >"$g/memory.max" || { echo "memory.max" >&2; return 2; }
	[ -f "$g/memory.swap.max" ] && echo 0 >"$g/memory.swap.max"
	echo "$g"
}

# srnic_loaded: whether srnic is loaded in this VM.
srnic_loaded() { [ -d /sys/module/srnic ]; }

# srnic_holders: the processes of this VM that have /dev/srnic open.
srnic_holders() {
	local p
	for p in /proc/[0-9]*; do
		ls -l "$p/fd" 2>/dev/null | grep -q '/dev/srnic' &&
			echo "  pid ${p#/proc/} ($(cat "$p/comm" 2>/dev/null)) has /dev/srnic open"
	done
	return 0
}

srnic_refcnt_zero() {
	local n=
	read -r n </sys/module/srnic/refcnt 2>/dev/null
	[ "$n" = 0 ]
}

# unload_checked: unloads srnic from this VM if it is loaded. Waits (10 s,
# scaled) for its reference count to drop to 0, then rmmod; when that fails,
# prints why (the count and who holds /dev/srnic open) and returns 1.
unload_checked() {
	srnic_loaded || return 0
	wait_until 10 srnic_refcnt_zero
	rmmod srnic && return 0
	echo "rmmod srnic failed in $ROLE: refcnt $(cat /sys/module/srnic/refcnt 2>/dev/null)"
	srnic_holders
	return 1
}

# unload_srnic_both: unloads srnic from both VMs; fails the case if it cannot.
unload_srnic_both() {
	unload_checked || fail "srnic could not be unloaded here"
	peer ". /srnic/lib.sh; unload_checked" || fail "srnic could not be unloaded on the peer"
}

# bg_start NAME CMD: runs the shell command CMD in the background in this VM,
# in a session of its own (bg_kill_all kills it with everything it started);
# its output and exit status go to /tmp/NAME.log and /tmp/NAME.rc.
bg_start() {
	# The log of an earlier command of the same name must not be read as
	# this one's (rmpp_wait_ready greps it before the new shell opens it).
	rm -f "/tmp/$1.rc"
	: >"/tmp/$1.log"
	# Not a process group leader (no job control here): setsid does not fork,
	# and $! is the new session's id.
	setsid sh -c 'sh -c "$1" >"/tmp/$2.log" 2>&1; echo $? >"/tmp/$2.rc"' _ "$2" "$1" \
		</dev/null >/dev/null 2>&1 &
	echo $! >>/tmp/.bg_sessions
	echo "$1" >>/tmp/.bg_names
}

# crash_lines: the kernel's lines about programs that died of a signal in
# this VM (segfault, general protection, trap: the program, the address and
# the library it was in), the last 5, or "none".
crash_lines() {
	local l
	l=$(dmesg | grep -E ': segfault at |general protection( fault)? ip|\] trap [a-z ]+ ip' | tail -n 5)
	echo "${l:-none}"
}

# bg_logs: the last lines of every background command bg_start started in
# this VM since the last bg_kill_all (for a failed case's report).
bg_logs() {
	local n
	[ -f /tmp/.bg_names ] || return 0
	# A name used twice (one log file, overwritten) is shown once.
	for n in $(awk '!seen[$0]++' /tmp/.bg_names); do
		echo "-- the last lines of background command $n in $ROLE:"
		tail -n 15 "/tmp/$n.log" 2>/dev/null
	done
}

# bg_kill_all: kills every session bg_start started in this VM.
bg_kill_all() {
	local s
	[ -f /tmp/.bg_sessions ] || return 0
	for s in $(cat /tmp/.bg_sessions); do kill -9 -- "-$s" 2>/dev/null; done
	rm -f /tmp/.bg_sessions /tmp/.bg_names
	return 0
}

# bg_stacks: session_stacks of every session bg_start started in this VM.
bg_stacks() {
	local s
	[ -f /tmp/.bg_sessions ] || return 0
	for s in $(cat /tmp/.bg_sessions); do session_stacks "$s"; done
}

# peer_bg NAME CMD...: bg_start on the peer (the command travels base64-encoded,
# so it may hold any quotes).
peer_bg() {
	local name=$1
	shift
	peer ". /srnic/lib.sh; bg_start $name \"\$(echo $(printf '%s' "$*" | base64 -w0) | base64 -d)\""
}

# peer_wait NAME [SECONDS]: waits (default 120 s, scaled) for a peer_bg
# command, prints its output, returns its exit status (124 on timeout).
peer_wait() {
	peer "i=0; while [ ! -f /tmp/$1.rc ] && [ \$i -lt $(($(scaled "${2:-120}") * 5)) ]; do sleep 0.2; i=\$((i+1)); done; cat /tmp/$1.log; [ -f /tmp/$1.rc ] && exit \$(cat /tmp/$1.rc); exit 124"
}

XFER_PORT=18515

# iwarp_matrix OP [big|lean]: verified `srnic xfer --op OP` transfers of 0 B
# to 1 MiB with CRC off, CRC on, and CRC with markers, scatter/gather up to 16
# elements: each size in each of the three modes (18 transfers); "big" adds
# 4 MiB (check-long: 16 MiB) with CRC, markers and 16 elements (19). "lean" (for the variants of an
# operation whose framing the full matrix of another case covers) gives each
# size one mode in turn (6 transfers). `make check-long` runs all 19 for every
# OP. One server on the peer serves all of them in turn. Each wait fails after
# 60 s without progress, not after a fixed time for its size.
iwarp_matrix() {
	local op=$1 size sge n=0 i=0 want sizes="0 1 4095 4096 65536 1048576" full=1 big=0
	[ "${2:-}" = lean ] && full=0
	[ "${2:-}" = big ] && big=1
	[ "${LONG_RUN:-0}" = 1 ] && full=1 big=1
	want=$((full ? 18 + big : 6))
	load_srnic_both
	XFER_PORT=$((XFER_PORT + 1))
	peer_bg xfer_srv "srnic xfer -s -p $XFER_PORT -t 60 --count $want"
	wait_listen "$XFER_PORT" peer || fail "the $op server did not listen"
	matrix_one() {
		srnic xfer -c "$PEER" -p "$XFER_PORT" -t 60 --op "$op" "$@" ||
			{ peer_wait xfer_srv 1; fail "$op $*"; }
		n=$((n + 1))
	}
	for size in $sizes; do
		i=$((i + 1))
		if [ $full = 1 ] || [ $((i % 3)) = 1 ]; then
			sge=1; [ "$size" -ge 4096 ] && sge=4
			matrix_one --size "$size" --sge "$sge"
		fi
		if [ $full = 1 ] || [ $((i % 3)) = 2 ]; then
			sge=1; [ "$size" -ge 16 ] && sge=16
			matrix_one --size "$size" --sge "$sge" --crc
		fi
		if [ $full = 1 ] || [ $((i % 3)) = 0 ]; then
			sge=1; [ "$size" -ge 2 ] && sge=2
			matrix_one --size "$size" --sge "$sge" --crc --markers
		fi
	done
	if [ $big = 1 ]; then matrix_one --size "$(count 4194304 16777216)" --sge 16 --crc --markers; fi
	peer_wait xfer_srv || fail "the $op server failed"
	expect_eq "verified $op transfers" "$n" "$want"
	expect_idle
}

# ---- Helpers of the srnic-vmtest cases.

# srnic_stat NAME: one counter of `srnic stats` in this VM.
srnic_stat() { srnic stats | sed -n "s/^$1: //p"; }

# The gauges of `srnic stats`: every object srnic holds now. All are 0 when
# srnic is idle, except contexts, which counts the stats query's own file.
GAUGES="contexts pinned_pages qps pds mrs cqs listeners conn_requests sockets"
GAUGES="$GAUGES rmpp_endpoints rmpp_endpoints_lingering rmpp_active_sends rmpp_active_recvs"
IDLE_USAGE="contexts=1 pinned_pages=0 qps=0 pds=0 mrs=0 cqs=0 listeners=0 conn_requests=0 sockets=0"
IDLE_USAGE="$IDLE_USAGE rmpp_endpoints=0 rmpp_endpoints_lingering=0 rmpp_active_sends=0 rmpp_active_recvs=0"

# srnic_usage: the gauges of this VM as "name=value ..." in GAUGES order;
# IDLE_USAGE when srnic is not loaded (it holds nothing then).
srnic_usage() {
	srnic_loaded || { echo "$IDLE_USAGE"; return 0; }
	# One awk for all gauges (every process costs about 0.1 s here); a gauge
	# that `srnic stats` did not print (say it failed) shows as "?".
	srnic stats | awk -v gauges="$GAUGES" '
		{ k = $1; sub(/:$/, "", k); v[k] = $2 }
		END {
			n = split(gauges, g, " ")
			for (i = 1; i <= n; i++)
				printf "%s%s=%s", (i > 1 ? " " : ""), g[i], (g[i] in v ? v[g[i]] : "?")
			print ""
		}'
}

srnic_idle() { [ "$(srnic_usage)" = "$IDLE_USAGE" ]; }

# idle_wait_here SECONDS: waits (scaled) until srnic holds nothing in this VM
# (cleanup finishes when the last work item in flight drops its references);
# otherwise prints what it still holds and returns 1.
idle_wait_here() {
	wait_until "$1" srnic_idle && return 0
	echo "srnic not idle in $ROLE after $(scaled "$1") s: $(srnic_usage)"
	srnic_holders
	return 1
}

# idle_wait SECONDS: idle_wait_here in both VMs (the peer waits on its own
# side: one peer command, not one per poll).
idle_wait() {
	local bad=0
	idle_wait_here "$1" || bad=1
	peer ". /srnic/lib.sh; idle_wait_here $1" || bad=1
	return $bad
}

# expect_idle: fails the case unless srnic becomes idle in both VMs within 10 s.
expect_idle() {
	idle_wait 10 || fail "srnic not idle"
	echo "ok: srnic idle on both VMs"
}

# vmtest MODE [ARGS...]: `srnic-vmtest MODE -s` on the peer and
# `srnic-vmtest MODE -c $PEER` here, both with ARGS; fails the case unless both
# sides exit 0. The server's output follows the client's.
VMTEST_PORT=19000
vmtest() {
	local mode=$1 rc prc
	shift
	VMTEST_PORT=$((VMTEST_PORT + 2))
	peer_bg vmtest_srv "srnic-vmtest $mode -s -p $VMTEST_PORT $*"
	srnic-vmtest "$mode" -c "$PEER" -p "$VMTEST_PORT" "$@"
	rc=$?
	echo "-- srnic-vmtest $mode, server side (peer):"
	peer_wait vmtest_srv 600
	prc=$?
	[ "$rc" = 0 ] || fail "srnic-vmtest $mode: client side failed (exit $rc)"
	[ "$prc" = 0 ] || fail "srnic-vmtest $mode: server side failed (exit $prc)"
}

# pid_of PATTERN: the pid of the one srnic tool process whose command line
# contains PATTERN (busybox has no pgrep; the shells bg_start runs it under
# carry the command line too, so only the srnic process counts). Prints
# nothing and fails unless exactly one matches.
pid_of() {
	local p
	p=$(ps -o pid,args | awk -v pat="$1" '$2 ~ /(^|\/)srnic$/ && index($0, pat) { print $1 }')
	[ "$(echo "$p" | wc -w)" = 1 ] || { echo "pid_of: not one srnic process running '$1': '$p'" >&2; return 1; }
	echo "$p"
}

# ---- srnic's tracepoints (Documentation/srnic/observability.rst) ----
TRACEFS=/sys/kernel/tracing
# trace_start: records srnic's trace events in this VM from now on, into an
# empty buffer (srnic must be loaded: its events come with the module).
trace_start() {
	[ -e $TRACEFS/trace ] || mount -t tracefs tracefs $TRACEFS || fail "cannot mount tracefs"
	[ -d $TRACEFS/events/srnic ] || fail "no srnic trace events in $TRACEFS/events"
	echo 0 >$TRACEFS/tracing_on
	echo >$TRACEFS/trace
	echo 1 >$TRACEFS/events/srnic/enable
	echo 1 >$TRACEFS/tracing_on
}
# trace_stop: stops recording; the buffer stays for trace_lines.
trace_stop() { echo 0 >$TRACEFS/events/srnic/enable; }
# trace_lines EVENT [ERE]: the recorded lines of event srnic_EVENT (matching
# ERE), without the ftrace prefix.
trace_lines() { sed -En "s/^.* srnic_($1): //p" $TRACEFS/trace | grep -E -- "${2:-.}"; }
# trace_count EVENT [ERE]: how many trace_lines.
trace_count() { trace_lines "$@" | wc -l; }
# peer_trace_count EVENT [ERE]: trace_count on the peer.
peer_trace_count() { peer ". /srnic/lib.sh; trace_count $1 '${2:-.}'"; }

# ---- Sandia RMPP helpers ----
# rmpp_setup: the node table on both VMs: odd NIDs 1..15 are VM a, even NIDs
# 2..16 are VM b (both on eth0).
rmpp_setup() {
	local mac_a mac_b
	mac_a=$(cat /sys/class/net/eth0/address)
	mac_b=$(peer "cat /sys/class/net/eth0/address") || return 1
	local cmd="for n in 1 3 5 7 9 11 13 15; do srnic rmpp node add \$n $mac_a eth0 || exit 1; done;"
	cmd="$cmd for n in 2 4 6 8 10 12 14 16; do srnic rmpp node add \$n $mac_b eth0 || exit 1; done"
	sh -c "$cmd" || return 1
	peer "$cmd"
}

# rmpp_stat NAME: the value of counter rmpp_NAME here.
rmpp_stat() { srnic stats | sed -n "s/^rmpp_$1: //p"; }
# peer_rmpp_stat NAME: the same on the peer.
peer_rmpp_stat() { peer "srnic stats" | sed -n "s/^rmpp_$1: //p"; }

# rmpp_stats_line [peer]: the RMPP counters that are not zero, on one line.
rmpp_stats_line() {
	if [ "$1" = peer ]; then peer "srnic stats"; else srnic stats; fi |
		sed -n 's/^rmpp_//p' | awk -F': ' '$2 != 0 { printf "%s=%s ", $1, $2 }'
	echo
}

# rmpp_wait_ready NAME [SECONDS]: waits until the peer's background command NAME
# printed its "ready" line (or ended).
rmpp_wait_ready() {
	peer "i=0; while ! grep -q ready /tmp/$1.log 2>/dev/null && [ ! -f /tmp/$1.rc ] && [ \$i -lt ${2:-120} ]; do sleep 1; i=\$((i+1)); done; grep -q ready /tmp/$1.log || { cat /tmp/$1.log; exit 1; }"
}

# local_wait_ready FILE [SECONDS]: the same for a local background command's log.
local_wait_ready() {
	local i=0
	while ! grep -q ready "$1" 2>/dev/null && [ $i -lt "${2:-120}" ]; do sleep 1; i=$((i + 1)); done
	grep -q ready "$1" || { cat "$1"; return 1; }
}

# rmpp_counters: both VMs' RMPP counters, the FAIL_DIAG of the RMPP cases.
rmpp_counters() {
	echo "a: $(rmpp_stats_line)"
	echo "b: $(rmpp_stats_line peer)"
}

# vmtp_stat NAME: the value of counter vmtp_NAME here.
vmtp_stat() { srnic stats | sed -n "s/^vmtp_$1: //p"; }
# peer_vmtp_stat NAME: the same on the peer.
peer_vmtp_stat() { peer "srnic stats" | sed -n "s/^vmtp_$1: //p"; }

# vmtp_counters_here: this VM's VMTP counters that are not 0 (on one line),
# its raw IPv4 sockets of protocol 81 (a VMTP stack has one: "0051" in
# /proc/net/raw), its entities, its qdiscs and its clock.
vmtp_counters_here() {
	echo "counters: $(srnic stats | sed -n 's/^vmtp_\([a-z_]*\): \([1-9][0-9]*\)$/\1=\2/p' | tr '\n' ' ')"
	echo "raw sockets of protocol 81:"
	grep ':0051 ' /proc/net/raw
	srnic res vmtp
	/bin/tc qdisc show dev eth0
	echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), uptime $(cut -d' ' -f1 /proc/uptime) s"
}

# vmtp_counters: vmtp_counters_here on both VMs: the FAIL_DIAG of the VMTP
# cases.
vmtp_counters() {
	echo "-- a:"; vmtp_counters_here
	echo "-- b:"; peer ". /srnic/lib.sh; vmtp_counters_here"
}

# load_srnic: load srnic in this VM only.
load_srnic() {
	srnic_loaded || insmod "$SRNIC_KO" || fail "insmod"
}

# siw_peer_up / siw_peer_down: Linux's soft-iWARP device siw0 on the peer's eth0
# (the reference peer of the interop cases).
siw_peer_up() {
	peer "rdma link add siw0 type siw netdev eth0 && rdma link show siw0/1" || fail "siw on the peer"
}
siw_peer_down() { peer "rdma link delete siw0"; }
# siw_up / siw_down: the same siw0 on this VM's eth0 (siw is built into the
# test kernel, so both VMs can have it: siw <-> siw runs).
siw_up() { rdma link add siw0 type siw netdev eth0 && rdma link show siw0/1 || fail "siw here"; }
siw_down() { rdma link delete siw0; }
# siw_gone: deletes siw0 (and the benchmark's rxe0) in this VM if a case
# left it (case_cleanup).
siw_gone() {
	local d
	for d in siw0 rxe0; do
		[ -e /sys/class/infiniband/$d ] || continue
		echo "deleting the $d left behind in $ROLE"
		rdma link delete $d
	done
}

# wait_cm_listen PORT [peer]: waits until an rdma_cm id listens on PORT in
# this VM (or the peer's), for RoCE (rxe), whose listeners have no TCP
# socket; 30 s at most.
wait_cm_listen() {
	local cmd="i=0; while ! rdma res show cm_id | grep -qE 'LISTEN.*:$1( |\$)'; do i=\$((i+1)); [ \$i -gt 300 ] && exit 1; sleep 0.1; done"
	if [ "${2:-}" = peer ]; then peer "$cmd"; else sh -c "$cmd"; fi
}

# listen_pattern PORT: the grep -E pattern of a socket listening on PORT in
# /proc/net/tcp or /proc/net/tcp6 (whatever its local address).
listen_pattern() { printf ':%04X 0+:0000 0A' "$1"; }
# tcp_listens PORT: whether a TCP socket, IPv4 or IPv6, listens on PORT in the
# reader's network namespace.
tcp_listens() { grep -qE "$(listen_pattern "$1")" /proc/net/tcp /proc/net/tcp6 2>/dev/null; }

# wait_listen PORT [peer]: waits until a TCP socket (IPv4 or IPv6) listens on
# PORT in this VM (or the peer's): srnic's and siw's listeners are kernel
# sockets, so this works for both. 30 s at most.
wait_listen() {
	if [ "$2" = peer ]; then
		peer ". /srnic/lib.sh; i=0; while ! tcp_listens $1; do i=\$((i+1)); [ \$i -gt 300 ] && exit 1; sleep 0.1; done"
	else
		local i=0
		while ! tcp_listens "$1"; do
			i=$((i + 1)); [ $i -gt 300 ] && return 1; sleep 0.1
		done
	fi
}

# export_file NAME PATH: hands PATH to the host through the port srnic.files
# (run.sh saves it as <logs>/files/NAME for the case's host check, see
# tests/vm/host/). gzip, base64, and the md5 of the gzip stream to check it.
FILES_TTY=${SRNIC_FILES:-/dev/ttyS2}
export_file() {
	gzip -c "$2" >/tmp/.export.gz
	{
		echo "SRNIC-FILE-BEGIN $1"
		base64 /tmp/.export.gz
		echo "SRNIC-FILE-END $1 $(md5sum </tmp/.export.gz | cut -d' ' -f1)"
	} >"$FILES_TTY"
	echo "exported $1: $(wc -c <"$2") bytes ($(wc -c </tmp/.export.gz) gzipped)"
	rm -f /tmp/.export.gz
}

# bounded SECONDS CMD...: runs CMD and returns its status; if it is still
# running after SECONDS, prints where each of its threads is (state and kernel
# stack) and returns 124, leaving it behind.
bounded() {
	local t=$1 pid i=0 task
	shift
	"$@" &
	pid=$!
	while [ -e "/proc/$pid" ] && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
		if [ $i -ge $((t * 10)) ]; then
			echo "bounded: '$*' still running after $t s:"
			for task in /proc/$pid/task/*; do
				echo "  thread $(basename "$task") $(cat "$task/comm") state $(cut -d' ' -f3 "$task/stat")"
				sed 's/^/    /' "$task/stack"
			done
			return 124
		fi
		sleep 0.1
		i=$((i + 1))
	done
	wait "$pid"
}

# ---- rdma-core programs on srnic (the stand-ins) and on siw ----

# stack_prefix STACK: what runs an rdma-core program on STACK: "srnic" (the
# stand-ins of tools/rdma-compat, `srnic exec`), "srnic-crc" (the same, its
# connections asking for MPA CRC: `srnic exec --crc`), "siw" (rdma-core's own
# libraries, on siw0: nothing) or "plain" (a program of no RDMA stack, such as
# make bench's TCP rows: nothing).
stack_prefix() {
	case "$1" in
	srnic) echo "srnic exec --" ;;
	srnic-crc) echo "srnic exec --crc --" ;;
	siw | rxe | plain) ;;
	*) fail "stack_prefix: unknown stack '$1'" ;;
	esac
}

# compat_pair WHERE PORT SECONDS SRV_STACK "SRV_CMD" CLI_STACK "CLI_CMD": an
# rdma-core server program and its client, each on its stack (stack_prefix),
# each killed after SECONDS: the server on WHERE ("peer" or "here"), started in
# the background, the client in the other VM once the server listens on PORT.
# CLI_CMD names the server's address itself (compat_addr WHERE). Sets CLI_OUT,
# CLI_RC, SRV_OUT and SRV_RC (the programs' output and exit status); the
# stand-ins trace each established connection of either side to /tmp/trace in
# its VM (compat_mpa). COMPAT_MARK, when set, names a command that runs with
# "before" just before the client starts (the server listening) and with
# "after" just after it has ended (make bench's CPU time, bench.sh).
compat_pair() {
	local where=$1 port=$2 t=$3 ss=$4 sc=$5 cs=$6 cc=$7 pid t0 t1 t2
	t0=$(uptime_cs)
	rm -f /tmp/trace
	if [ "$where" = peer ]; then
		peer_bg compat_srv "rm -f /tmp/trace; SRNIC_COMPAT_TRACE=/tmp/trace timeout $t $(stack_prefix "$ss") $sc"
		if ! { if [ "$ss" = rxe ]; then wait_cm_listen "$port" peer; else wait_listen "$port" peer; fi; }; then
			peer_wait compat_srv 1
			peer ". /srnic/lib.sh; cat /proc/net/tcp; task_stacks ${sc%% *}"
			fail "the server did not listen: $sc"
		fi
		[ -z "${COMPAT_MARK:-}" ] || $COMPAT_MARK before
		t1=$(uptime_cs)
		CLI_OUT=$(SRNIC_COMPAT_TRACE=/tmp/trace timeout "$t" $(stack_prefix "$cs") $cc 2>&1)
		CLI_RC=$?
		t2=$(uptime_cs)
		[ -z "${COMPAT_MARK:-}" ] || $COMPAT_MARK after
		SRV_OUT=$(peer_wait compat_srv "$t")
		SRV_RC=$?
	else
		SRNIC_COMPAT_TRACE=/tmp/trace timeout "$t" $(stack_prefix "$ss") $sc >/tmp/compat_srv.log 2>&1 &
		pid=$!
		if ! { if [ "$ss" = rxe ]; then wait_cm_listen "$port"; else wait_listen "$port"; fi; }; then
			cat /tmp/compat_srv.log /proc/net/tcp
			task_stacks "${sc%% *}"
			fail "the server did not listen: $sc"
		fi
		[ -z "${COMPAT_MARK:-}" ] || $COMPAT_MARK before
		t1=$(uptime_cs)
		CLI_OUT=$(PEER_TIMEOUT=$((t + 60)) peer "rm -f /tmp/trace; SRNIC_COMPAT_TRACE=/tmp/trace timeout $t $(stack_prefix "$cs") $cc")
		CLI_RC=$?
		t2=$(uptime_cs)
		[ -z "${COMPAT_MARK:-}" ] || $COMPAT_MARK after
		wait "$pid"
		SRV_RC=$?
		SRV_OUT=$(cat /tmp/compat_srv.log)
	fi
	echo "compat_pair: server listening after $((t1 - t0))0 ms, client ran $((t2 - t1))0 ms, server ended $(($(uptime_cs) - t2))0 ms later"
}

# PERFTEST_TRIES: how many times perftest_pair runs a pair in all.
PERFTEST_TRIES=3

# perftest_uncalibrated OUTPUT: whether OUTPUT (of either side of a pair) is
# that of a perftest program that could not measure its CPU's frequency.
# perftest turns cycle counts into time with a frequency it fits, at report
# time, from rdtsc over gettimeofday (get_cpu_mhz: 200 busy waits of 0.1 to
# 2 ms), and refuses a poor fit ("Correlation coefficient r^2: ... < 0.9";
# the _bw programs then exit 1 with "Can't produce a report", the _lat ones
# print no usable figure). Under TCG a busy host deschedules the vCPU during
# the fit. The transfer is over by then: such a run says nothing about
# either stack.
perftest_uncalibrated() {
	case "$1" in *"Correlation coefficient r^2"*) return 0 ;; esac
	return 1
}

# perftest_cm_crash OUTPUT RC: whether a perftest client (-R) died of SIGSEGV
# (RC 139) after a refused rdma_cm connection. Debian 12's perftest 4.5-0.17
# retries a refused connection (rdma_cm_client_connection) after
# rdma_cm_destroy_cma freed its cm ids, channel and nodes array, and passes
# the freed nodes[0].cma_id to rdma_resolve_addr: a crash there with rdma-core
# (rxe) and the stand-ins alike. Refused: the client's rdma_connect came
# before the server's second rdma_listen, which follows the rdma_cm
# handshake (the server's last SEND) without a sync. perftest fixed it in
# 2025 (3d9d8d0, "Fix crashes and logical flaws in RDMA CM connection retry").
perftest_cm_crash() {
	[ "$2" = 139 ] || return 1
	case "$1" in *RDMA_CM_EVENT_REJECTED*) return 0 ;; esac
	return 1
}

# perftest_again: why the perftest pair compat_pair just ran (CLI_OUT,
# SRV_OUT, CLI_RC) says nothing and is to be run again (perftest_uncalibrated,
# perftest_cm_crash); nothing when it is not.
perftest_again() {
	if perftest_uncalibrated "$CLI_OUT$SRV_OUT"; then
		echo "perftest could not calibrate its clock (r^2 < 0.9)"
	elif perftest_cm_crash "$CLI_OUT" "$CLI_RC"; then
		echo "perftest's client crashed retrying a refused connection (perftest_cm_crash)"
	fi
}

# perftest_pair ARGS...: compat_pair ARGS for perftest programs, run again
# (PERFTEST_TRIES times in all) while perftest_again says why. A run that
# failed in any other way is not run again.
perftest_pair() {
	local try=1 why
	compat_pair "$@"
	while why=$(perftest_again) && [ -n "$why" ] && [ "$try" -lt "$PERFTEST_TRIES" ]; do
		try=$((try + 1))
		echo "perftest_pair: $why; run $try of $PERFTEST_TRIES"
		compat_pair "$@"
	done
}

# perftest_expect WHAT PROGRAM [show]: fails the case unless both sides of
# the last perftest_pair exited 0 and PROGRAM's client printed its result
# line; sets PERF_FIG to that line's figure (perftest_figure). Both outputs,
# and srnic's and siw's last kernel lines, are printed when anything failed
# (with "show", the outputs always).
perftest_expect() {
	local bad=0
	PERF_FIG=$(perftest_figure "$2" "$CLI_OUT")
	if [ "$CLI_RC" != 0 ] || [ "$SRV_RC" != 0 ] || [ -z "$PERF_FIG" ]; then bad=1; fi
	if [ $bad = 1 ] || [ "${3:-}" = show ]; then
		echo "$CLI_OUT"
		echo "-- server:"
		echo "$SRV_OUT"
	fi
	[ $bad = 0 ] || dmesg | grep -i -e srnic -e siw | tail -20
	expect_eq "$1: client exit status" "$CLI_RC" 0
	expect_eq "$1: server exit status" "$SRV_RC" 0
	[ -n "$PERF_FIG" ] || fail "$1: no result line"
}

# session_stacks SID: where each thread of each process of session SID is
# (state, wait channel, kernel stack).
session_stacks() {
	local p t
	for p in /proc/[0-9]*; do
		[ "$(cut -d' ' -f6 "$p/stat" 2>/dev/null)" = "$1" ] || continue
		for t in "$p"/task/*; do
			echo "  ${p#/proc/} $(cat "$p/comm" 2>/dev/null) thread ${t##*/}: state $(cut -d' ' -f3 "$t/stat" 2>/dev/null), $(cat "$t/wchan" 2>/dev/null)"
			sed 's/^/      /' "$t/stack" 2>/dev/null
		done
	done
}

# task_stacks PROGRAM: where each thread of each process named PROGRAM is.
task_stacks() {
	local p t
	for p in $(pidof "$1"); do
		for t in /proc/"$p"/task/*; do
			echo "$1 $p thread ${t##*/}: state $(cut -d' ' -f3 "$t/stat"), $(cat "$t/wchan")"
			sed 's/^/    /' "$t/stack"
		done
	done
}

# compat_addr WHERE: the address of WHERE ("peer" or "here").
compat_addr() { if [ "$1" = peer ]; then echo "$PEER"; else echo "$ADDR"; fi; }

# compat_mpa WHERE: the MPA flags (srnic's SRNIC_MPA_*) of each connection the
# stand-ins established in WHERE during the last compat_pair, one a line.
compat_mpa() {
	if [ "$1" = peer ]; then peer "cat /tmp/trace 2>/dev/null"; else cat /tmp/trace 2>/dev/null; fi |
		sed -n -E 's/^established mpa=(0x[0-9a-f]+|0)$/\1/p'
}

# expect_crc WHAT WHERE on|off: fails the case unless srnic's side in WHERE
# established at least one connection during the last compat_pair and each
# had CRC on both ways (CRC_TX|CRC_RX, 0x300), or neither way.
expect_crc() {
	local m n=0 want=0
	[ "$3" = on ] && want=$((0x300))
	for m in $(compat_mpa "$2"); do
		n=$((n + 1))
		[ $((m & 0x300)) = "$want" ] || fail "$1: negotiated mpa=$m, CRC wanted $3"
	done
	[ "$n" -gt 0 ] || fail "$1: no connection traced on srnic's side ($2)"
	echo "ok: $1: CRC $3 on $n connection(s)"
}

# perftest_args PROGRAM ITERS_BW ITERS_LAT: "-s SIZE -n ITERS" for a perftest
# program: 64 KiB messages for the _bw programs, 64 bytes for the _lat ones.
perftest_args() {
	case "$1" in
	*_bw) echo "-s 65536 -n $2" ;;
	*) echo "-s 64 -n $3" ;;
	esac
}

# perftest_figure PROGRAM OUTPUT [msgrate]: the figure of perftest's result
# line: the average bandwidth in MB/s of a _bw program (with "msgrate" its
# MsgRate[Mpps] column, millions of messages per second), the typical latency
# in usec of a _lat program (empty when the output has no result line).
perftest_figure() {
	local col=5
	case "$1" in *_bw) [ "${3:-}" = msgrate ] || col=4 ;; esac
	echo "$2" | awk -v c="$col" '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= c && NF <= 9 { print $c; exit }'
}

# rping_status WHAT STATUS OUTPUT: fails the case unless rping (rdma-core's, on
# siw or through the stand-ins) exited 0, or exited 255 with "rdma_get_cm_event:
# Bad file descriptor" as the last line of OUTPUT after its normal end (its
# DISCONNECT EVENT): Debian 12's rping (rdma-core 44) destroys its event
# channel without stopping its event thread, which may be on its way back into
# rdma_get_cm_event and then exits the program with -1. rdma-core fixed it in
# 2025 (f3ae6534a, "rping: terminate CM event thread before exiting": "This
# causes flakiness in test scripts that use rping"). The exchange itself was
# complete then; the cases still check every other line.
rping_status() {
	if [ "$2" = 0 ]; then
		echo "ok: $1 (0)"
	elif [ "$2" = 255 ] && [ "$(echo "$3" | tail -n1)" = "rdma_get_cm_event: Bad file descriptor" ] &&
		echo "$3" | grep -q "DISCONNECT EVENT\.\.\.$"; then
		echo "ok: $1 (255 after a normal end: rping's own exit race, rdma-core f3ae6534a)"
	else
		fail "$1: got '$2', want '0'"
	fi
}

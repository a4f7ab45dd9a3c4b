"""Reading a FalkorDB server's log after it went away: a crash report at its end is a crash (the
server is started again), also when a forked child of the crashed server wrote its own exit after
the report; a line of a server, or kgp's line before a start, after the report is not."""

from __future__ import annotations

from kgp.stores.falkordb.processes import STARTING, crash_cause

REPORT = [
    "=== REDIS BUG REPORT START: Cut & paste starting from here ===",
    "18922:M 06 Dec 2026 18:59:50.670 # Redis 8.2.3 crashed by signal: 11, si_code: 0",
    "18922:M 06 Dec 2026 18:59:50.670 # Killed by PID: 9855, UID: 0",
    "=== REDIS BUG REPORT END. Make sure to include from START to END. ===",
    "       Please report the crash by opening an issue on github:",
    "           http://github.com/redis/redis/issues",
]
CHILD_EXIT = (
    "18938:C 06 Dec 2026 18:59:50.679 # Child failed reporting info to parent, exiting. Broken pipe"
)


def test_a_crash_report_at_the_end_is_a_crash() -> None:
    assert crash_cause(REPORT) == "Redis 8.2.3 crashed by signal: 11, si_code: 0"


def test_a_forked_child_s_exit_after_the_report_still_reads_as_the_crash() -> None:
    assert crash_cause([*REPORT, CHILD_EXIT]) == "Redis 8.2.3 crashed by signal: 11, si_code: 0"


def test_a_server_s_line_or_a_start_after_the_report_is_no_crash() -> None:
    later = "19001:M 06 Dec 2026 19:00:02.001 * Ready to accept connections unix"
    assert crash_cause([*REPORT, CHILD_EXIT, later]) is None
    assert crash_cause([*REPORT, f"{STARTING} (06 Dec 2026 19:00:01)"]) is None
    assert crash_cause(["19001:M 06 Dec 2026 19:00:02.001 * Ready to accept connections"]) is None

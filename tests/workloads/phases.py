"""Known workload in time: phase_one spins for SECONDS of wall time, then
phase_two for SECONDS more (default 2 each), each in its own loop line, so
that a time slice of a capture can be checked against the phase it covers
in every output (the heatmap by line).  Prints "phases START SWITCH END",
wall times (time.time()) of the phases' bounds.  Runs on 3.10-3.15."""
import sys
import time


def phase_one(end):
    n = 0
    while time.monotonic() < end:  # PHASE-ONE loop
        n += 1
    return n


def phase_two(end):
    n = 0
    while time.monotonic() < end:  # PHASE-TWO loop
        n += 1
    return n


def main(seconds):
    wall, mono = time.time(), time.monotonic()
    phase_one(mono + seconds)
    phase_two(mono + 2 * seconds)
    print("phases %.6f %.6f %.6f" % (wall, wall + seconds, wall + 2 * seconds), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)

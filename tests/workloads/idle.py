"""A Python process that just waits (for attach tests)."""
import sys
import time

time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 30)
